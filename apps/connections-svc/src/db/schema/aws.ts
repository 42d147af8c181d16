import type { Generated } from "kysely";

/** An AWS account connection: the governance credential it signs with and where it sends calls. */
export interface AwsConnectionsTable {
  id: string;
  org_id: string;
  project_id: string;
  name: string;
  description: string | null;
  credential_id: string;
  default_region: string;
  /** jsonb: service → endpoint URL overrides (private endpoints, tests). */
  endpoints: Record<string, string>;
  /** jsonb */
  labels: Record<string, string>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}
