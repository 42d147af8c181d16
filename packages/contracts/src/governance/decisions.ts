import { z } from "@hono/zod-openapi";
import { defineRoute } from "../common/route.ts";
import { DecisionReason, GOVERNED_ACTIONS } from "./internal.ts";
import { GovProjectParams, jsonBody, jsonRequest } from "./shared.ts";

/**
 * "Would this be allowed?": the same evaluation the enforcement points ask for, answered to the
 * caller about the caller, with nothing enforced, counted or recorded as a denial.
 */
export const PolicyDecisionQuery = z
  .strictObject({
    action: z.enum(GOVERNED_ACTIONS).describe("The governed action, e.g. `sandbox:exec` or `llm:invoke`"),
    resource: z
      .strictObject({
        type: z
          .string()
          .min(1)
          .max(64)
          .describe("The Cedar entity type: `Sandbox`, `Model`, `ClusterResource`, `AwsService`, `Tool`, `Host`"),
        id: z.string().min(1).max(256),
        kind: z
          .string()
          .max(64)
          .optional()
          .describe("The kind bindings select on (`sandbox`, `cluster`, `aws-connection`, `connector`)"),
        labels: z.record(z.string(), z.string()).optional(),
      })
      .describe("The resource asked about: its Cedar type and id, optionally its kind and labels"),
    context: z
      .record(z.string(), z.unknown())
      .optional()
      .describe("The action's attributes, as the enforcement point would send them (e.g. `program`, `argv`)"),
  })
  .openapi("PolicyDecisionQuery");

export const PolicyDecision = z
  .object({
    decision: z.enum(["allow", "deny"]),
    enforced: z.boolean().describe("False when only dryrun bindings denied: the request would proceed"),
    reasons: z
      .array(DecisionReason.openapi("PolicyDecisionReason"))
      .describe("The rules that decided a deny (empty on allow)"),
    policies: z
      .array(
        z.object({
          bindingId: z.string(),
          policyId: z.string(),
          version: z.number().int(),
          mode: z.enum(["enforce", "dryrun"]),
        }),
      )
      .optional()
      .describe("The bound policy versions evaluated"),
    evaluatedAt: z.string(),
  })
  .openapi("PolicyDecision");

export const evaluatePolicyDecisionRoute = defineRoute(
  { service: "governance", access: "project:read" },
  {
    operationId: "evaluatePolicyDecision",
    description:
      "Would this be allowed? Evaluates the project's bound policies for the caller, an action and a resource of the project, as an enforcement point would, and answers the decision with the rules that decided. Nothing is enforced and no denial is recorded.",
    method: "post",
    path: "/v1/projects/{projectId}/policy-decisions",
    tags: ["Governance"],
    summary: "Would this be allowed? Evaluate the bound policies for the caller",
    request: { params: GovProjectParams, ...jsonRequest(PolicyDecisionQuery) },
    responses: { 200: jsonBody(PolicyDecision, "The decision") },
  },
);
