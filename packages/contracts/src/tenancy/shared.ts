import { z } from "@hono/zod-openapi";
import { pathParam, ResourceName } from "../common/schemas.ts";

/** A JSON response of the given schema. */
export function jsonBody<T extends z.ZodType>(schema: T, description: string) {
  return { description, content: { "application/json": { schema } } };
}

/** A JSON request body (required). */
export function jsonRequest<T extends z.ZodType>(schema: T) {
  return { body: { required: true, content: { "application/json": { schema } } } };
}

export const NoContent = { description: "Done; no body" };

export const OrgIdParams = z.object({ orgId: pathParam("orgId", "org_01jc2x3y4z5a6b7c8d9e0f1g2h") });
export const ProjectIdParams = z.object({ projectId: pathParam("projectId", "prj_01jc2x3y4z5a6b7c8d9e0f1g2h") });
export const TeamIdParams = z.object({ teamId: pathParam("teamId", "team_01jc2x3y4z5a6b7c8d9e0f1g2h") });

/** `limit` and an opaque `cursor` (the last id of the previous page). */
export const PageQuery = z.object({
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

export const Name = ResourceName;
export const Description = z.string().max(1000);
