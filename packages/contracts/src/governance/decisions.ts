import { z } from "@hono/zod-openapi";
import { defineRoute } from "../common/route.ts";
import { JsonObject } from "../common/schemas.ts";
import { DecisionReason, GOVERNED_ACTIONS } from "./internal.ts";
import { GovProjectParams, jsonBody, jsonRequest } from "./shared.ts";

/** Someone of the project a decision is asked for, other than the caller. */
export const PolicyDecisionPrincipal = z
  .strictObject({
    type: z
      .enum(["user", "api_token", "sandbox"])
      .describe("`user` (a member), `api_token` (an API token) or `sandbox` (a sandbox's own identity)"),
    id: z.string().min(1).max(200).describe("The user, API token or sandbox id"),
  })
  .openapi("PolicyDecisionPrincipal");
export type PolicyDecisionPrincipal = z.infer<typeof PolicyDecisionPrincipal>;

/**
 * "Would this be allowed?": the same evaluation the enforcement points ask for, answered to the
 * caller about the caller (or, for a project admin, about another principal of the project), with
 * nothing enforced, counted or recorded as a denial.
 */
export const PolicyDecisionQuery = z
  .strictObject({
    principal: PolicyDecisionPrincipal.optional().describe(
      "Whom to ask for; the caller when absent. Asking for anyone else needs the project's admin role.",
    ),
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
    context: JsonObject()
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
    principal: z
      .object({
        type: z.string().describe("The principal's type: `user`, `api_token` or `sandbox`"),
        id: z.string().describe("The principal's id"),
        displayName: z.string().optional().describe("Its name, when it has one"),
      })
      .describe("Whom the decision was evaluated for"),
    evaluatedAt: z.string(),
  })
  .openapi("PolicyDecision");

export const evaluatePolicyDecisionRoute = defineRoute(
  { service: "governance", access: "project:read" },
  {
    operationId: "evaluatePolicyDecision",
    description:
      "Would this be allowed? Evaluates the project's bound policies for the caller (or, for a project admin, another member, API token or sandbox of the project), an action and a resource of the project, as an enforcement point would, and answers the decision with the rules that decided. Nothing is enforced and no denial is recorded.",
    method: "post",
    path: "/v1/projects/{projectId}/policy-decisions",
    tags: ["Governance"],
    summary: "Would this be allowed? Evaluate the bound policies for the caller or another principal",
    request: { params: GovProjectParams, ...jsonRequest(PolicyDecisionQuery) },
    responses: { 200: jsonBody(PolicyDecision, "The decision") },
  },
);
