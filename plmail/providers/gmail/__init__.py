"""Gmail over its REST API: syncer, first import, propagator and the quota pacer they share."""
