"""Queues, job functions, the cron schedule and the workers that run them."""
