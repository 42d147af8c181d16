import type { Generated } from "kysely";

/** A registered cluster. The tunnel columns are the owner registry: which replica holds the tunnel. */
export interface ClustersTable {
  id: string;
  org_id: string;
  project_id: string;
  name: string;
  description: string | null;
  /** jsonb */
  labels: Record<string, string>;
  /** The current tunnel token: its id and a SHA-256 of its secret (the token itself is never stored). */
  tunnel_token_id: string;
  tunnel_token_hash: string;
  /** Set by the replica holding the tunnel; the tunnel counts as connected while `tunnel_expires_at` is ahead. */
  tunnel_replica: string | null;
  /** The internal URL other replicas forward proxy requests to. */
  tunnel_url: string | null;
  /** One id per tunnel connection, so a closing tunnel never clears the entry of its successor. */
  tunnel_connection_id: string | null;
  tunnel_expires_at: Date | null;
  first_connected_at: Date | null;
  disconnected_at: Date | null;
  last_heartbeat_at: Date | null;
  relay_version: string | null;
  kubernetes_version: string | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}
