import { sessionRoutes } from "@agentplane/contracts";
import { databaseTargets } from "@agentplane/db/testing";
import { runSecurityChecks } from "./fixtures/security.ts";

// Postgres only: the checks exercise authorization, which does not differ between the engines.
const [postgres] = await databaseTargets();
runSecurityChecks("sessions", sessionRoutes, postgres!);
