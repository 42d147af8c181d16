import type { ColumnType, Generated, RawBuilder } from "kysely";

/** The Postgres schema that holds tenancy's tables. */
export const TENANCY_SCHEMA = "tenancy";

/** A timestamptz: read as Date, written as Date or ISO string. */
type Timestamp = ColumnType<Date, Date | string, Date | string>;
type CreatedAt = ColumnType<Date, Date | string | undefined, never>;

export interface InstallationTable {
  /** Always 1: the installation is a single row. */
  id: number;
  installation_id: string;
  status: "unactivated" | "activated";
  /** SHA-256 (hex) of the current setup code while unactivated. */
  setup_code_hash: string | null;
  activated_at: Timestamp | null;
  created_at: CreatedAt;
}

export interface UserTable {
  id: string;
  email: string | null;
  display_name: string | null;
  created_at: CreatedAt;
}

export interface UserIdentityTable {
  issuer: string;
  subject: string;
  user_id: string;
  created_at: CreatedAt;
}

export interface OrgTable {
  id: string;
  name: string;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface OrgMemberTable {
  org_id: string;
  user_id: string;
  role: "owner" | "admin" | "member" | "viewer";
  created_at: CreatedAt;
}

export interface TeamTable {
  id: string;
  org_id: string;
  name: string;
  description: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface TeamMemberTable {
  team_id: string;
  user_id: string;
  created_at: CreatedAt;
}

export interface TeamProjectTable {
  team_id: string;
  project_id: string;
  role: "admin" | "developer" | "viewer";
}

export interface ProjectTable {
  id: string;
  org_id: string;
  name: string;
  description: string | null;
  /** Labels (JSON object) that organization policy bindings select projects by. */
  labels: ColumnType<Record<string, string>, RawBuilder<string> | undefined, RawBuilder<string>>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

/** Direct project grants (the creator of a project is its admin). */
export interface ProjectMemberTable {
  project_id: string;
  user_id: string;
  role: "admin" | "developer" | "viewer";
}

export interface SigningKeyTable {
  /** The JWK `kid`. */
  id: string;
  project_id: string;
  /** Public JWK as JSON text. */
  public_jwk: string;
  /** PKCS#8 private key, AES-256-GCM encrypted under the installation secret key. */
  private_key_enc: string;
  status: "current" | "previous" | "retired";
  created_at: CreatedAt;
  /** For a previous key: it stays published until then. */
  published_until: Timestamp | null;
}

export interface InvitationTable {
  id: string;
  org_id: string;
  email: string;
  role: "owner" | "admin" | "member" | "viewer";
  status: "pending" | "accepted" | "declined" | "revoked";
  invited_by: string;
  expires_at: Timestamp;
  created_at: CreatedAt;
  responded_at: Timestamp | null;
}

export interface ApiTokenTable {
  id: string;
  /** Null for the installation owner token (activation or bootstrap), which acts in every org of its user. */
  org_id: string | null;
  user_id: string;
  name: string;
  role: "owner" | "admin" | "member" | "viewer";
  project_id: string | null;
  /** Permissions the token is restricted to (JSON array of permission names); null: its role cap only. */
  scopes: ColumnType<string[] | null, string | null | undefined, string | null>;
  /** SHA-256 (hex) of the secret part (`apl_` tokens) or of the whole string (bootstrap token). */
  secret_hash: string;
  /** `apl` for generated tokens, `bootstrap` for AGENTPLANE_BOOTSTRAP_TOKEN. */
  kind: "apl" | "bootstrap";
  prefix: string;
  created_at: CreatedAt;
  last_used_at: Timestamp | null;
  expires_at: Timestamp | null;
  revoked_at: Timestamp | null;
}

export interface ActivationSessionTable {
  id: string;
  user_code: string;
  status: "pending" | "approved" | "denied";
  interval_seconds: number;
  expires_at: Timestamp;
  last_polled_at: Timestamp | null;
  failed_attempts: Generated<number>;
  /** The owner token for the poller, encrypted until it is handed out once, then null. */
  token_enc: string | null;
  org_id: string | null;
  user_id: string | null;
  created_at: CreatedAt;
}

export interface BrowserSessionTable {
  id: string;
  user_id: string;
  /** The API token the session was exchanged from: its restrictions and revocation carry over. */
  api_token_id: string | null;
  via: "api_token" | "oidc" | "invitation" | "session";
  /** SHA-256 (hex) of the secret part of the cookie's value. */
  secret_hash: string;
  user_agent: string | null;
  created_at: CreatedAt;
  expires_at: Timestamp;
  last_used_at: Timestamp | null;
  revoked_at: Timestamp | null;
  /** The session this one was opened from: ending that one ends this one too. */
  parent_session_id: ColumnType<string | null, string | null | undefined, string | null>;
}

/** A sign-in device flow (RFC 8628): both codes are kept as SHA-256 hashes only. */
export interface DeviceAuthorizationTable {
  id: string;
  device_code_hash: string;
  user_code_hash: string;
  client_name: string;
  status: "pending" | "approved" | "denied" | "consumed";
  interval_seconds: number;
  expires_at: Timestamp;
  last_polled_at: Timestamp | null;
  /** Who approved or denied it, and the token minted on approval (sealed until the client polls). */
  user_id: string | null;
  token_id: string | null;
  token_enc: string | null;
  created_at: CreatedAt;
  decided_at: Timestamp | null;
}

export interface TenancyDatabase {
  installation: InstallationTable;
  users: UserTable;
  user_identities: UserIdentityTable;
  orgs: OrgTable;
  org_members: OrgMemberTable;
  teams: TeamTable;
  team_members: TeamMemberTable;
  team_projects: TeamProjectTable;
  projects: ProjectTable;
  project_members: ProjectMemberTable;
  signing_keys: SigningKeyTable;
  invitations: InvitationTable;
  api_tokens: ApiTokenTable;
  activation_sessions: ActivationSessionTable;
  browser_sessions: BrowserSessionTable;
  device_authorizations: DeviceAuthorizationTable;
}
