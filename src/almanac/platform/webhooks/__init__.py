"""Webhooks: readers' endpoints subscribed to plug-ins, the events a run or a state move leaves
in the outbox, and their signed deliveries with retries (issue 38; the spec leaves outbound
delivery open, "Notifications" 2). Free of the network: the sender is an adapter
(`almanac.sandbox.webhooks`)."""
