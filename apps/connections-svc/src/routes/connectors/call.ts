import { callConnectorToolRoute } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import { callTool, ToolCallDenied } from "../../connectors/services/calls.ts";
import { connectorScope } from "../../connectors/services/store.ts";
import type { ConnectionsRouteContext } from "../context.ts";
import { toolViewer } from "./helpers.ts";

export function registerCallConnectorTool(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(callConnectorToolRoute, async (c) => {
    const { serverId } = c.req.valid("param");
    const body = c.req.valid("json");
    const row = await ctx.connectors.index.row(ctx.db, serverId);
    const caller = await authorize(c, ctx.connectors.authorizer, "connectors:call", connectorScope(row));
    try {
      const result = await callTool(
        ctx,
        ctx.connectors,
        row,
        { principal: caller.principal, ...toolViewer(caller), requestId: caller.requestId },
        body.name,
        body.arguments,
      );
      return c.json(result, 200);
    } catch (error) {
      if (error instanceof ToolCallDenied) {
        throw new ProblemError("policy-denied", {
          detail: error.message,
          extensions: {
            action: "tool:call",
            ...(error.ruleId ? { ruleId: error.ruleId } : {}),
            ...(error.policyId ? { policyId: error.policyId } : {}),
          },
        });
      }
      throw error;
    }
  });
}
