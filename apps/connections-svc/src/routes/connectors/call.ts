import { callConnectorToolRoute } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import type { ServiceApp } from "@agentplane/service-kit";
import { callTool, ToolCallDenied } from "../../connectors/services/calls.ts";
import type { ConnectionsRouteContext } from "../context.ts";
import { connectorActor, toolViewer } from "./helpers.ts";

export function registerCallConnectorTool(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(callConnectorToolRoute, async (c) => {
    const { serverId } = c.req.valid("param");
    const body = c.req.valid("json");
    const { row, actor, authz } = await connectorActor(c, ctx, "connectors:call", serverId, { hot: true });
    try {
      const result = await callTool(
        ctx,
        ctx.connectors,
        row,
        { principal: actor.principal, ...toolViewer(authz), requestId: actor.requestId },
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
