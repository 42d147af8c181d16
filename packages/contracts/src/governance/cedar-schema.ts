/**
 * The Cedar schema every governance policy is validated against (Cedar's human schema format).
 * Served read-only at `GET /v1/governance/cedar-schema` so authors can validate offline
 * (`cedar validate --schema agentplane.cedarschema --policies my.cedar`).
 *
 * Labels of projects, sandboxes, clusters and connectors are entity tags:
 * `resource.hasTag("team") && resource.getTag("team") == "ml"`. Every context attribute below is
 * always present (the decision API fills absent ones with "", 0, false or an empty set), so
 * policies need no `has` checks.
 */
export const CEDAR_SCHEMA = `// Agentplane governance schema
entity Organization;
entity Project in [Organization] tags String;
entity User;
entity ApiToken;
entity SandboxToken in [Project];
entity Service;
entity Cluster in [Project] tags String;
entity Sandbox in [Project] tags String;
entity Model in [Project];
entity ClusterResource in [Cluster, Project];
entity AwsService in [Project];
entity Connector in [Project] tags String;
entity Tool in [Connector, Project];
entity Host;

type Port = { port: Long, visibility: String };
type SandboxSpec = {
  image: String,
  ports: Set<Port>,
  publicPorts: Set<Long>,
  envNames: Set<String>,
  cpuMillis: Long,
  memoryMb: Long,
};

action "sandbox:create", "sandbox:update", "sandbox:start" appliesTo {
  principal: [User, ApiToken, SandboxToken, Cluster, Service],
  resource: [Sandbox],
  context: SandboxSpec,
};
action "sandbox:exec" appliesTo {
  principal: [User, ApiToken, SandboxToken, Cluster, Service],
  resource: [Sandbox],
  // program: the basename of argv[0]; args: argv after it; command: argv joined with spaces.
  context: { program: String, args: Set<String>, command: String, tty: Bool },
};
action "sandbox:expose-port" appliesTo {
  principal: [User, ApiToken, SandboxToken, Cluster, Service],
  resource: [Sandbox],
  context: { port: Long, visibility: String },
};
action "sandbox:egress" appliesTo {
  principal: [User, ApiToken, SandboxToken, Cluster, Service],
  resource: [Sandbox, Host],
  // platform: true when the destination is the platform's own API (open unless a rule forbids it).
  context: { host: String, port: Long, platform: Bool },
};
action "llm:invoke" appliesTo {
  principal: [User, ApiToken, SandboxToken, Cluster, Service],
  resource: [Model],
  context: { provider: String, family: String, region: String, modelId: String },
};
action "cluster:get", "cluster:list", "cluster:watch", "cluster:create", "cluster:update", "cluster:patch",
  "cluster:delete", "cluster:deletecollection", "cluster:exec" appliesTo {
  principal: [User, ApiToken, SandboxToken, Cluster, Service],
  resource: [ClusterResource, Cluster],
  context: {
    group: String, version: String, resource: String, subresource: String,
    namespace: String, name: String, path: String,
  },
};
action "aws:call" appliesTo {
  principal: [User, ApiToken, SandboxToken, Cluster, Service],
  resource: [AwsService],
  context: { service: String, operation: String, region: String, bucket: String, key: String },
};
action "tool:call" appliesTo {
  principal: [User, ApiToken, SandboxToken, Cluster, Service],
  resource: [Tool],
  context: { connectorId: String, tool: String },
};
`;

/** Cedar entity types of the schema (a policy naming another type is a 400). */
export const CEDAR_ENTITY_TYPES = [
  "Organization",
  "Project",
  "User",
  "ApiToken",
  "SandboxToken",
  "Service",
  "Cluster",
  "Sandbox",
  "Model",
  "ClusterResource",
  "AwsService",
  "Connector",
  "Tool",
  "Host",
] as const;
