import type { ColumnType, RawBuilder } from "kysely";

export const GOVERNANCE_SCHEMA = "governance";

type Timestamp = ColumnType<Date, Date | string, Date | string>;
type Json<T> = ColumnType<T, RawBuilder<unknown>, RawBuilder<unknown>>;

/** A compiled Cedar statement as stored with its version. */
export interface StoredRule {
  id: string;
  effect: "permit" | "forbid";
  text: string;
  /** The actions the statement's scope can match; null = every action. */
  actions: string[] | null;
}

export interface PoliciesTable {
  id: string;
  org_id: string;
  project_id: string | null;
  scope_key: string;
  name: string;
  description: string | null;
  labels: Json<Record<string, string>>;
  latest_version: number;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface PolicyVersionsTable {
  policy_id: string;
  version: number;
  cedar: string;
  rules: Json<StoredRule[]>;
  author: string;
  reason: string | null;
  created_at: Timestamp;
}

export interface BindingTargetJson {
  projectIds?: string[];
  projectSelector?: string;
  kind?: string;
  selector?: string;
}

export interface BindingsTable {
  id: string;
  org_id: string;
  project_id: string | null;
  policy_id: string;
  version: number | null;
  mode: "enforce" | "dryrun";
  target: Json<BindingTargetJson>;
  created_by: string;
  created_at: Timestamp;
}

export interface CredentialsTable {
  id: string;
  org_id: string;
  project_id: string;
  name: string;
  kind: string;
  description: string | null;
  labels: Json<Record<string, string>>;
  metadata: Json<Record<string, string>>;
  secret_version: number;
  sealed: string;
  wrapped_key: string;
  key_id: string;
  previous_sealed: string | null;
  previous_wrapped_key: string | null;
  previous_key_id: string | null;
  previous_expires_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  rotated_at: Timestamp | null;
  last_used_at: Timestamp | null;
  use_count: ColumnType<string | number, number | undefined, number>;
}

export interface ReplicasTable {
  id: string;
  seen_at: Timestamp;
}

export interface LeasesTable {
  name: string;
  holder: string;
  expires_at: Timestamp;
}

export interface DriftReportsTable {
  org_id: string;
  audited_at: Timestamp;
  report: Json<unknown>;
}

/** A policy version an egress decision was evaluated against. */
export interface HeldVersion {
  bindingId: string;
  policyId: string;
  version: number;
  mode: "enforce" | "dryrun";
}

export interface EgressVersionsTable {
  sandbox_id: string;
  org_id: string;
  project_id: string | null;
  policies: Json<HeldVersion[]>;
  decided_at: Timestamp;
}

export interface ProjectLabelsTable {
  project_id: string;
  org_id: string;
  labels: Json<Record<string, string>>;
  updated_at: Timestamp;
}

export interface GovernanceDb {
  policies: PoliciesTable;
  policy_versions: PolicyVersionsTable;
  bindings: BindingsTable;
  credentials: CredentialsTable;
  replicas: ReplicasTable;
  leases: LeasesTable;
  drift_reports: DriftReportsTable;
  egress_versions: EgressVersionsTable;
  project_labels: ProjectLabelsTable;
}
