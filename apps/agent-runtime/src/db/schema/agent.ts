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

export type HeartbeatRunStatus = "skipped" | "delivered" | "suppressed" | "failed";

/** One heartbeat tick that ran (or was skipped for a reason worth keeping). */
export interface HeartbeatRunTable {
  id: string;
  status: HeartbeatRunStatus;
  /** Why it was skipped or failed, or why the gate failed open. */
  reason: string | null;
  /** The run's final text: shown when delivered, kept (flagged suppressed) otherwise. */
  text: string | null;
  thread_id: string | null;
  model_id: string | null;
  started_at: string;
  finished_at: string | null;
}
