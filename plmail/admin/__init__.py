"""What the person running plmail looks at: queues, failures, health."""
