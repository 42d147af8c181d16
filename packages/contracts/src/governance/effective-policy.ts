import { z } from "@hono/zod-openapi";
import { defineRoute } from "../common/route.ts";
import { pathParam, Timestamp } from "../common/schemas.ts";
import { BindingMode, BindingTarget } from "./bindings.ts";
import { GovProjectParams, jsonBody } from "./shared.ts";

export const EffectiveActionSummary = z
  .object({
    action: z.string(),
    /**
     * `allow`: no binding covers it (but `sandbox:egress`, closed until a policy permits hosts) or a
     * permit always applies; `deny`: always denied; `conditional`: depends on the request.
     */
    decision: z.enum(["allow", "deny", "conditional"]),
    /** False when no binding covers the action (governance is opt-in per action). */
    governed: z.boolean(),
    ruleIds: z.array(z.string()),
    /** Enforced bindings decide; dryrun ones only report. */
    mode: BindingMode.optional(),
  })
  .openapi("EffectiveActionSummary");

export const EffectivePolicySchema = z
  .object({
    sandboxId: z.string(),
    projectId: z.string(),
    bindings: z.array(
      z.object({
        bindingId: z.string(),
        scope: z.enum(["org", "project"]),
        policyId: z.string(),
        policyName: z.string(),
        version: z.number().int(),
        pinned: z.boolean(),
        mode: BindingMode,
        target: BindingTarget,
      }),
    ),
    actions: z.array(EffectiveActionSummary),
    egress: z.object({
      /** `none`: no egress; `all`: any host; `listed`: only the hosts matching `allowedHosts`. */
      access: z.enum(["none", "listed", "all", "conditional"]),
      allowedHosts: z.array(z.string()),
      deniedHosts: z.array(z.string()),
    }),
    evaluatedAt: Timestamp,
  })
  .openapi("EffectivePolicy");
export type EffectivePolicy = z.infer<typeof EffectivePolicySchema>;

export const getSandboxEffectivePolicyRoute = defineRoute(
  { service: "governance", access: "sandboxes:read" },
  {
    operationId: "getSandboxEffectivePolicy",
    method: "get",
    path: "/v1/projects/{projectId}/sandboxes/{sandboxId}/effective-policy",
    tags: ["Governance"],
    summary:
      "The bindings that reach a sandbox and what each sandbox action resolves to (a sandbox token reads its own)",
    description:
      "The bindings that reach the sandbox (organization, project, selector matches) with policy, version and mode, and for every sandbox action whether it resolves to allow, deny or conditional with the deciding rule ids; egress lists the allowed host patterns.",
    request: {
      params: GovProjectParams.extend({ sandboxId: pathParam("sandboxId", "sbx_01jc2x3y4z5a6b7c8d9e0f1g2h") }),
    },
    responses: { 200: jsonBody(EffectivePolicySchema, "The effective policy") },
  },
);
