export interface AgentTable {
  id: string;
  name: string;
  team: string;
  owner_user_id: string;
  /** 0 or 1: SQLite has no boolean. */
  verbose: number;
  main_model: string | null;
  heartbeat_model: string | null;
  cron_model: string | null;
  created_at: string;
}

/** Small key/value settings of the agent (the webhook receiver switch). */
export interface SettingTable {
  key: string;
  value: string;
}
