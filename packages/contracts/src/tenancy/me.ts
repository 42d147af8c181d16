import { z } from "@hono/zod-openapi";
import { PRINCIPAL_TYPES } from "../common/identity.ts";
import { OrgRoleSchema } from "../common/roles.ts";
import { defineRoute } from "../common/route.ts";
import { jsonBody } from "./shared.ts";

export const MeOrganization = z
  .object({ id: z.string(), name: z.string(), role: OrgRoleSchema })
  .openapi("MeOrganization");

export const Me = z
  .object({
    /** The identity type behind the presented token. */
    type: z.enum(PRINCIPAL_TYPES),
    id: z.string(),
    displayName: z.string().optional(),
    email: z.string().optional(),
    /** For API tokens: the user the token acts for. */
    userId: z.string().optional(),
    /** Organizations the identity can act in, with its effective role there. */
    organizations: z.array(MeOrganization).describe("The organizations the caller belongs to, with its role in each"),
    projectId: z.string().optional(),
    sandboxId: z.string().optional(),
  })
  .openapi("Me");
export type Me = z.infer<typeof Me>;

export const getMeRoute = defineRoute(
  { service: "tenancy", access: "authenticated" },
  {
    operationId: "getMe",
    description:
      "Who the token acts for: the principal (user, API token, cluster or sandbox), its organization memberships and roles, and any restriction the token carries.",
    method: "get",
    path: "/v1/auth/me",
    tags: ["Identity"],
    summary: "The identity behind the presented token",
    responses: { 200: jsonBody(Me, "The current identity") },
  },
);

export const meRoutes = [getMeRoute] as const;
