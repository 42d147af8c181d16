import { problemResponseSpec } from "@agentplane/problem-details";
import { z } from "@hono/zod-openapi";
import { Labels, pathParam } from "../common/schemas.ts";

export function jsonBody<T extends z.ZodType>(schema: T, description: string) {
  return { description, content: { "application/json": { schema } } };
}

export function jsonRequest<T extends z.ZodType>(schema: T) {
  return { body: { required: true, content: { "application/json": { schema } } } };
}

export const NoContent = { description: "Done; no body" };

export const GovOrgParams = z.object({ orgId: pathParam("orgId", "org_01jc2x3y4z5a6b7c8d9e0f1g2h") });
export const GovProjectParams = z.object({ projectId: pathParam("projectId", "prj_01jc2x3y4z5a6b7c8d9e0f1g2h") });

export const GovPageQuery = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(200)
    .default(50)
    .openapi({ param: { name: "limit", in: "query" } }),
  cursor: z
    .string()
    .max(64)
    .optional()
    .openapi({ param: { name: "cursor", in: "query" } }),
});

export const GovLabels = Labels;

export const GovName = z.string().trim().min(1).max(100);
export const GovDescription = z.string().max(1000);

/**
 * The 409 when what an organization binds in all would pass its bound (docs/decisions/0028): a
 * binding, or a new version of a policy bindings follow as `latest`.
 */
export const BOUND_POLICY_SIZE_CONFLICT =
  "`limit-exceeded` with `kind` `bound-policy-size`: the organization's bindings (its own and its projects') would bind more than 1000 statements or 1 MiB of Cedar in all, each binding counting the version it resolves to";

/** The 409 of a policy change: a new body that bindings following `latest` would take past the bound. */
export const boundPolicySizeConflict = () => ({ 409: problemResponseSpec(BOUND_POLICY_SIZE_CONFLICT) });
