-- Deliveries are listed per workspace, per channel and per finding (GET /api/deliveries),
-- newest first; deleting a channel cascades to its deliveries.
CREATE INDEX deliveries_workspace_created_idx ON deliveries (workspace_id, created_at DESC, id DESC);
CREATE INDEX deliveries_channel_created_idx ON deliveries (channel_id, created_at DESC, id DESC);
