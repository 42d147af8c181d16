import { z } from "@hono/zod-openapi";
import { limitedCreateConflict } from "../common/object-limits.ts";
import { ProjectRoleSchema } from "../common/roles.ts";
import { defineRoute } from "../common/route.ts";
import { Labels, Timestamp } from "../common/schemas.ts";
import {
  Description,
  jsonBody,
  jsonRequest,
  Name,
  NoContent,
  OrgIdParams,
  PageQuery,
  ProjectIdParams,
} from "./shared.ts";

/** Project labels: what organization policy bindings select projects by (`projectSelector`). */
export const ProjectLabels = Labels.describe(
  "Labels of the project; organization policy bindings select projects by them (projectSelector)",
);

export const Project = z
  .object({
    id: z.string(),
    orgId: z.string(),
    name: z.string(),
    description: z.string().optional(),
    labels: z
      .record(z.string(), z.string())
      .describe("Labels of the project; organization policy bindings select projects by them"),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    /** The caller's effective role on the project. */
    role: ProjectRoleSchema.optional(),
  })
  .openapi("Project");
export type Project = z.infer<typeof Project>;

export const ProjectList = z
  .object({ items: z.array(Project), nextCursor: z.string().optional() })
  .openapi("ProjectList");
export const CreateProjectBody = z
  .strictObject({ name: Name, description: Description.optional(), labels: ProjectLabels.optional() })
  .openapi("CreateProject");
export const UpdateProjectBody = z
  .strictObject({
    name: Name.optional(),
    description: Description.optional(),
    labels: ProjectLabels.optional().describe("Replaces the project's labels"),
  })
  .openapi("UpdateProject");

/** A public JWK as published: `kid`, `alg` ES256, `use` sig. */
export const PublicJwk = z
  .object({ kty: z.string(), crv: z.string(), x: z.string(), y: z.string(), kid: z.string(), alg: z.string() })
  .catchall(z.unknown())
  .openapi("PublicJwk");

export const ProjectPublicKey = z
  .object({
    projectId: z.string(),
    kid: z.string(),
    alg: z.literal("ES256"),
    /** SPKI PEM of the current public key. */
    pem: z.string(),
    jwk: PublicJwk,
    createdAt: Timestamp,
  })
  .openapi("ProjectPublicKey");

export const Jwks = z.object({ keys: z.array(PublicJwk) }).openapi("Jwks");

export const KeyRotation = z
  .object({
    projectId: z.string(),
    /** The new current key. */
    kid: z.string(),
    previousKid: z.string(),
    /** Until then the previous key stays published in the JWKS. */
    previousPublishedUntil: Timestamp,
  })
  .openapi("KeyRotation");

const tags = ["Projects"];

export const createProjectRoute = defineRoute(
  { service: "tenancy", access: "projects:create" },
  {
    operationId: "createProject",
    description:
      "Creates a project with its own ES256 signing key (encrypted at rest). The creator becomes its admin; audited.",
    method: "post",
    path: "/v1/orgs/{orgId}/projects",
    tags,
    summary: "Create a project (with its ES256 signing key); the creator becomes its admin",
    request: { params: OrgIdParams, ...jsonRequest(CreateProjectBody) },
    responses: { 201: jsonBody(Project, "Created"), ...limitedCreateConflict("projects") },
  },
);

export const listProjectsRoute = defineRoute(
  { service: "tenancy", access: "projects:list" },
  {
    operationId: "listProjects",
    description:
      "The organization's projects the caller can see (all for org admins, otherwise those with a direct or team role), cursor-paged.",
    method: "get",
    path: "/v1/orgs/{orgId}/projects",
    tags,
    summary: "Projects of an organization the caller can see",
    request: { params: OrgIdParams, query: PageQuery },
    responses: { 200: jsonBody(ProjectList, "One page of projects") },
  },
);

export const getProjectRoute = defineRoute(
  { service: "tenancy", access: "project:read" },
  {
    operationId: "getProject",
    description: "One project. Callers without access get 404.",
    method: "get",
    path: "/v1/projects/{projectId}",
    tags,
    summary: "Get a project",
    request: { params: ProjectIdParams },
    responses: { 200: jsonBody(Project, "The project") },
  },
);

export const updateProjectRoute = defineRoute(
  { service: "tenancy", access: "project:update" },
  {
    operationId: "updateProject",
    description:
      "Changes a project's name, description or labels (labels are replaced as a whole; organization policy bindings that select projects by label follow within seconds). Changing labels needs the organization's admin role (403 otherwise), as they decide which organization policies reach the project.",
    method: "patch",
    path: "/v1/projects/{projectId}",
    tags,
    summary: "Rename or describe a project",
    request: { params: ProjectIdParams, ...jsonRequest(UpdateProjectBody) },
    responses: { 200: jsonBody(Project, "Updated") },
  },
);

export const deleteProjectRoute = defineRoute(
  { service: "tenancy", access: "project:delete" },
  {
    operationId: "deleteProject",
    description: "Deletes the project and its signing keys; tokens and cluster JWTs bound to it stop working.",
    method: "delete",
    path: "/v1/projects/{projectId}",
    tags,
    summary: "Delete a project and its keys",
    request: { params: ProjectIdParams },
    responses: { 204: NoContent },
  },
);

export const rotateProjectKeysRoute = defineRoute(
  { service: "tenancy", access: "project:keys:rotate" },
  {
    operationId: "rotateProjectKeys",
    description:
      "Makes a new current signing key. The previous key stays published in the JWKS for `KEY_ROTATION_GRACE_SECONDS`, so relays and verifiers holding it keep working; audited.",
    method: "post",
    path: "/v1/projects/{projectId}/rotate-keys",
    tags,
    summary: "Make a new current signing key; the previous one stays published for the grace period",
    request: { params: ProjectIdParams },
    responses: { 200: jsonBody(KeyRotation, "Rotated") },
  },
);

export const getProjectPublicKeyRoute = defineRoute(
  { service: "tenancy", access: "project:keys:read" },
  {
    operationId: "getProjectPublicKey",
    description: "The project's current public signing key as PEM and JWK, for verifiers that pin one key.",
    method: "get",
    path: "/v1/projects/{projectId}/public-key",
    tags,
    summary: "The current public signing key as PEM and JWK",
    request: { params: ProjectIdParams },
    responses: { 200: jsonBody(ProjectPublicKey, "The current key") },
  },
);

export const getProjectJwksRoute = defineRoute(
  { service: "tenancy", access: "project:keys:read" },
  {
    operationId: "getProjectJwks",
    description:
      "The project's published keys as a JWKS: the current key and the previous one during its grace period. Relays verify platform-signed requests against it.",
    method: "get",
    path: "/v1/projects/{projectId}/.well-known/jwks.json",
    tags,
    summary: "Every published key of the project (current and previous within its grace period)",
    request: { params: ProjectIdParams },
    responses: { 200: jsonBody(Jwks, "The JWKS") },
  },
);

export const projectRoutes = [
  createProjectRoute,
  listProjectsRoute,
  getProjectRoute,
  updateProjectRoute,
  deleteProjectRoute,
  rotateProjectKeysRoute,
  getProjectPublicKeyRoute,
  getProjectJwksRoute,
] as const;
