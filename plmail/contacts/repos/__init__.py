"""The contacts area's own tables: address_book and contact_card."""
