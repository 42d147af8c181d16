import type { MigrationList } from "@agentplane/db";
import { outboxMigrations } from "@agentplane/events";
import * as initial from "./0001-initial.ts";
import * as apiTokenScopes from "./0003-api-token-scopes.ts";
import * as projectLabels from "./0004-project-labels.ts";
import * as browserSessions from "./0005-browser-sessions.ts";
import * as deviceAuthorizations from "./0006-device-authorizations.ts";
import * as personalApiTokensIndex from "./0007-personal-api-tokens-index.ts";
import * as signInExpiryIndexes from "./0008-sign-in-expiry-indexes.ts";
import * as endedTokenAndInvitationIndexes from "./0009-ended-token-and-invitation-indexes.ts";
import * as sessionParents from "./0010-session-parents.ts";

/** Applied in this order; never rename or reorder an entry that has shipped. */
export const migrations: MigrationList = {
  "0001_initial": initial,
  // `tenancy.event_outbox`: domain audit events waiting for the bus.
  ...outboxMigrations("0002"),
  "0003_api_token_scopes": apiTokenScopes,
  "0004_project_labels": projectLabels,
  "0005_browser_sessions": browserSessions,
  "0006_device_authorizations": deviceAuthorizations,
  "0007_personal_api_tokens_index": personalApiTokensIndex,
  "0008_sign_in_expiry_indexes": signInExpiryIndexes,
  "0009_ended_token_and_invitation_indexes": endedTokenAndInvitationIndexes,
  "0010_session_parents": sessionParents,
};
