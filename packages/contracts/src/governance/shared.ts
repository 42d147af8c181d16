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
