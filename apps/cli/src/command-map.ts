// Every /v1 operation and the command that reaches it, noun then verb, mirroring the API's tags.
// A command may serve two operations: the organization's and the project's variant of one thing
// (`policies list` lists the organization's policies, `policies list --project p` the project's),
// or the methods of one pass-through (`clusters proxy <cluster> GET /api`). A test walks the
// OpenAPI document and fails on an operation missing here or an entry whose operation is gone.

export const COMMANDS: Record<string, string> = {
  getMe: "auth whoami",
  listSessions: "auth sessions list",
  createSession: "auth sessions create",
  getCurrentSession: "auth sessions current",
  deleteCurrentSession: "auth sessions end",
  revokeSession: "auth sessions revoke",
  startDeviceAuthorization: "auth device start",
  pollDeviceAuthorization: "auth device poll",

  createOrganization: "orgs create",
  listOrganizations: "orgs list",
  getOrganization: "orgs get",
  updateOrganization: "orgs update",
  deleteOrganization: "orgs delete",

  listMembers: "members list",
  getMember: "members get",
  updateMember: "members update",
  removeMember: "members remove",

  createTeam: "teams create",
  listTeams: "teams list",
  getTeam: "teams get",
  updateTeam: "teams update",
  deleteTeam: "teams delete",
  addTeamMember: "teams members add",
  removeTeamMember: "teams members remove",
  grantTeamProject: "teams projects grant",
  revokeTeamProject: "teams projects revoke",

  createProject: "projects create",
  listProjects: "projects list",
  getProject: "projects get",
  updateProject: "projects update",
  deleteProject: "projects delete",
  rotateProjectKeys: "projects rotate-keys",
  getProjectPublicKey: "projects public-key",
  getProjectJwks: "projects jwks",

  createInvitation: "invitations create",
  listInvitations: "invitations list",
  revokeInvitation: "invitations revoke",
  listMyInvitations: "invitations mine",
  acceptInvitation: "invitations accept",
  declineInvitation: "invitations decline",
  previewInvitation: "invitations preview",
  redeemInvitation: "invitations redeem",

  createApiToken: "tokens create",
  listApiTokens: "tokens list",
  listMyApiTokens: "tokens mine",
  getApiToken: "tokens get",
  revokeApiToken: "tokens revoke",

  getInstallation: "installation get",
  startActivation: "installation activation start",
  pollActivation: "installation activation poll",

  createSandbox: "sandboxes create",
  listSandboxes: "sandboxes list",
  getSandbox: "sandboxes get",
  updateSandbox: "sandboxes update",
  deleteSandbox: "sandboxes delete",
  startSandbox: "sandboxes start",
  stopSandbox: "sandboxes stop",
  execSandboxStream: "sandboxes exec",
  execShell: "sandboxes run",
  listSandboxRevisions: "sandboxes revisions",
  rollbackSandbox: "sandboxes rollback",
  getSandboxEffectivePolicy: "sandboxes effective-policy",

  createSandboxToken: "sandbox-tokens create",
  listSandboxTokens: "sandbox-tokens list",
  getSandboxToken: "sandbox-tokens get",
  deleteSandboxToken: "sandbox-tokens delete",

  createShellSession: "sessions create",
  listShellSessions: "sessions list",
  getShellSession: "sessions get",
  deleteShellSession: "sessions delete",
  runShellSessionCommand: "sessions run",

  k8sGetApiVersions: "k8s api-versions",
  k8sGetApiGroups: "k8s api-groups",
  k8sGetApiResources: "k8s api-resources",
  k8sListPods: "k8s pods list",
  k8sGetPod: "k8s pods get",
  k8sExecPod: "k8s pods exec",
  k8sAttachPod: "k8s pods attach",

  listAuditTrail: "audit list",
  listInstallationAuditTrail: "audit installation",
  getAuditTrailStats: "audit stats",
  getAuditTrailTimeseries: "audit timeseries",

  listUsageCosts: "usage list",
  getUsageCostTimeseries: "usage timeseries",

  createSpendingLimit: "limits create",
  listSpendingLimits: "limits list",
  getSpendingLimitStatus: "limits status",
  getSpendingLimit: "limits get",
  updateSpendingLimit: "limits update",
  deleteSpendingLimit: "limits delete",

  getCedarSchema: "policies schema",
  listOrgPolicies: "policies list",
  listProjectPolicies: "policies list",
  createOrgPolicy: "policies create",
  createProjectPolicy: "policies create",
  getOrgPolicy: "policies get",
  getProjectPolicy: "policies get",
  updateOrgPolicy: "policies update",
  updateProjectPolicy: "policies update",
  evaluatePolicyDecision: "policies decide",
  deleteOrgPolicy: "policies delete",
  deleteProjectPolicy: "policies delete",
  listOrgPolicyVersions: "policies versions",
  listProjectPolicyVersions: "policies versions",
  getOrgPolicyVersion: "policies version",
  getProjectPolicyVersion: "policies version",

  listOrgPolicyBindings: "bindings list",
  listProjectPolicyBindings: "bindings list",
  createOrgPolicyBinding: "bindings create",
  createProjectPolicyBinding: "bindings create",
  getOrgPolicyBinding: "bindings get",
  getProjectPolicyBinding: "bindings get",
  deleteOrgPolicyBinding: "bindings delete",
  deleteProjectPolicyBinding: "bindings delete",
  getPolicyBindingDrift: "drift show",

  listCredentials: "credentials list",
  createCredential: "credentials create",
  getCredential: "credentials get",
  updateCredential: "credentials update",
  deleteCredential: "credentials delete",

  listInferenceProviders: "llm providers list",
  postLlmCloudA: "llm request",
  postLlmCloudAInProject: "llm request",
  postLlmCloudBFamily1: "llm request",
  postLlmCloudBFamily1InProject: "llm request",
  postLlmCloudBFamily2: "llm request",
  postLlmCloudBFamily2InProject: "llm request",
  postLlmCloudAAltFamily1: "llm request",
  postLlmCloudAAltFamily1InProject: "llm request",
  postLlmCloudAAltFamily2: "llm request",
  postLlmCloudAAltFamily2InProject: "llm request",

  createCluster: "clusters create",
  listClusters: "clusters list",
  getCluster: "clusters get",
  updateCluster: "clusters update",
  deleteCluster: "clusters delete",
  rotateClusterTunnelToken: "clusters rotate-token",
  openClusterTunnel: "clusters tunnel",
  clusterProxyGet: "clusters proxy",
  clusterProxyPost: "clusters proxy",
  clusterProxyPut: "clusters proxy",
  clusterProxyPatch: "clusters proxy",
  clusterProxyDelete: "clusters proxy",

  createAwsConnection: "aws create",
  listAwsConnections: "aws list",
  getAwsConnection: "aws get",
  updateAwsConnection: "aws update",
  deleteAwsConnection: "aws delete",
  testAwsConnection: "aws test",
  awsProxyRootGet: "aws proxy",
  awsProxyRootPost: "aws proxy",
  awsProxyGet: "aws proxy",
  awsProxyPost: "aws proxy",
  awsProxyPut: "aws proxy",
  awsProxyPatch: "aws proxy",
  awsProxyDelete: "aws proxy",

  listConnectors: "connectors list",
  createMcpConnector: "connectors create",
  createHttpConnector: "connectors create-http",
  previewConnectorDiscovery: "connectors preview",
  attachConnectorCredential: "connectors credentials attach",
  removeConnectorCredential: "connectors credentials remove",
  getConnector: "connectors get",
  updateConnector: "connectors update",
  deleteConnector: "connectors delete",
  getConnectorStatus: "connectors status",
  listConnectorTools: "connectors tools list",
  callConnectorTool: "connectors tools call",
  discoverConnector: "connectors discover",
  listPendingSpecs: "connectors specs pending",
  getPendingSpecDiff: "connectors specs diff",
  promotePendingSpec: "connectors specs promote",
  setConnectorEntryVisibility: "connectors visibility",
};

/** Commands of our own over an operation's answer (not operations themselves). */
export const DERIVED: Record<string, string> = {
  "sandboxes ports": "getSandbox",
};

/** One-line descriptions of the nouns (the API's tags), for `agentplane --help`. */
export const NOUNS: Record<string, string> = {
  auth: "Log in, show the identity, print or forget the token",
  "auth sessions": "Browser sessions of the caller",
  "auth device": "The sign-in device flow step by step (`auth login` runs all of it)",
  orgs: "Organizations",
  members: "Members of an organization",
  teams: "Teams, their members and project grants",
  "teams members": "Add people to a team or remove them",
  "teams projects": "Grant a team a role on a project, or revoke it",
  projects: "Projects of an organization",
  invitations: "Invitations to an organization",
  tokens: "API tokens",
  installation: "The installation and its activation",
  "installation activation": "The activation device flow step by step (`auth login` runs all of it)",
  sandboxes: "Sandboxes: create, start, stop, exec, revisions",
  "sandbox-tokens": "Tokens a sandbox's code acts with",
  sessions: "Shell sessions in sandboxes",
  k8s: "The Kubernetes-compatible view of sandboxes",
  "k8s pods": "Sandboxes as pods: list, get, exec, attach",
  audit: "The audit trail",
  usage: "Usage and costs",
  limits: "Spending limits",
  policies: "Governance policies (the organization's, or a project's with --project)",
  bindings: "Policy bindings (the organization's, or a project's with --project)",
  drift: "Drift between policy bindings and what is enforced",
  credentials: "Credentials a project's sandboxes use",
  llm: "Inference providers and model calls through the proxy",
  "llm providers": "The model providers the proxy can call",
  clusters: "Kubernetes clusters connected to a project",
  aws: "AWS connections",
  connectors: "MCP and HTTP connectors, their tools and specs",
  "connectors credentials": "Attach a credential to a connector, or remove it",
  "connectors tools": "A connector's tools: list them, call one",
  "connectors specs": "Spec changes a discovery found: pending, diff, promote",
};

const CREDENTIAL_FIELDS_HELP = `
Fields of each kind (secret ones marked *), with -f key=value or, to keep secrets out of the
shell's history and the process list, --input - reading a JSON body from stdin:
  cloud-a-bearer  token*
  cloud-a-keys    accessKeyId, secretAccessKey*, [sessionToken*]
  cloud-b-key     resourceName, key*
  aws-keys        accessKeyId, secretAccessKey*, [sessionToken*], [region]
  aws-role        roleArn, [externalId*], [region], [sessionName]
  http-bearer     token*
  http-header     headerName, value*
  http-basic      username, password*
([optional]; an update with new secret fields rotates the secret.)`;

const REMOTE_EXIT_HELP = `
Exits with the remote command's exit code, as \`sandboxes exec\` does, after printing its result.
Failures of the CLI itself (a refused request, a sandbox not running) exit 1, 3 or 4 as
\`agentplane help exit-codes\` lists them.`;

/** Text after a command's generated help, where its flags cannot say everything. */
export const EPILOGUES: Record<string, string> = {
  "sandboxes run": REMOTE_EXIT_HELP,
  "sessions run": REMOTE_EXIT_HELP,
  "credentials create": CREDENTIAL_FIELDS_HELP,
  "credentials update": CREDENTIAL_FIELDS_HELP,
};

/**
 * A terminal's table where the usual columns would not do: the audit trail leads with when and
 * what (its record ids and a second copy of the time would squeeze the action out of 80 columns).
 * Pipes keep the usual columns, so scripts reading them by position are unaffected.
 */
export const TERMINAL_COLUMNS: Record<string, string[]> = {
  listAuditTrail: ["time", "action", "outcome", "status"],
  listInstallationAuditTrail: ["time", "action", "outcome", "status"],
};
