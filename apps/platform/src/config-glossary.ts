import { OBJECT_LIMIT_KIND_NAMES, OBJECT_LIMIT_KINDS } from "@agentplane/contracts";
import { MAX_OBJECT_LIMIT } from "@agentplane/service-kit";

/** The defaults of `OBJECT_LIMITS`, from the catalog the services enforce, so the two cannot drift. */
const objectLimitDefaults = OBJECT_LIMIT_KIND_NAMES.map((kind) => {
  const spec = OBJECT_LIMIT_KINDS[kind];
  return `\`${kind}=${spec.default}\` per ${spec.per.replace(" and ", " and per ")}`;
}).join(", ");

/**
 * What each configuration variable means, for the generated reference (docs/configuration.md).
 * One entry per variable; `<deployable>:<VARIABLE>` where one deployable reads it differently.
 * A test fails when a deployable's schema has a variable without an entry here.
 */
export const CONFIG_GLOSSARY: Record<string, string> = {
  // Deployment: where a process listens, its storage, its bus, its identity
  PORT: "The HTTP port this process listens on (0 picks a free one).",
  HOST: "The address to listen on: all interfaces by default (containers); `127.0.0.1` keeps it to this host.",
  HTTP_KEEP_ALIVE_TIMEOUT_MS:
    "How long an idle keep-alive connection is held (ms, 1000–3600000; default 65000): above the idle timeout of a load balancer in front, or a POST it sends on a closing connection is answered 502.",
  SHUTDOWN_DELAY_MS:
    "On SIGTERM/SIGINT, how long the process keeps serving while `GET /health/ready` answers 503 (and every answer says `Connection: close`), so that Kubernetes' endpoint removal and load balancers stop sending it requests before it stops accepting (ms, 0–60000; default 5000). A second signal exits at once.",
  "all-in-one:SHUTDOWN_DELAY_MS":
    "As for a service, default 0: run by hand, Ctrl-C needs no delay. Behind a load balancer or in Kubernetes, set 5000.",
  SHUTDOWN_DRAIN_MS:
    "After the delay, how long requests in flight (a model call, an exec) and open WebSockets may take to finish before they are cut (ms, 0–600000; default 20000). Delay + drain + 10 s must stay under Kubernetes' `terminationGracePeriodSeconds` (the chart's is 40).",
  "all-in-one:SHUTDOWN_DRAIN_MS": "As for a service, default 5000: Ctrl-C waits at most 5 s for requests in flight.",
  "agent-runtime:HOST": "The address to listen on: loopback for native starts; the container image sets `0.0.0.0`.",
  DATABASE_URL:
    "`postgres://…` (distributed) or `pglite://<dir>` (embedded). Each service owns one schema and migrates it at start under an advisory lock; the database is created when missing.",
  "all-in-one:DATABASE_URL": "A Postgres server for every service of the process; unset: PGlite under the data dir.",
  "agent-runtime:DATABASE_URL": "SQLite URL of the agent database (default `file:<data dir>/agent.db`).",
  REDIS_URL:
    "BullMQ event bus and shared rate-limit counters; in memory when unset. Run Redis with persistence (`appendonly yes`): queued events live there until consumed.",
  LOG_LEVEL: "pino log level: `fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`.",
  INTERNAL_IDENTITY_PRIVATE_KEY:
    "Ed25519 JWK: the gateway signs the short-lived internal identity it forwards; services verify it (and sign their own calls).",
  INTERNAL_IDENTITY_PUBLIC_KEY: "The public half, for a service that only verifies the internal identity.",
  "egress proxy:INTERNAL_IDENTITY_PRIVATE_KEY":
    "Read only when `EGRESS_IDENTITY_PRIVATE_KEY` is unset (an installation from before it): the proxy then signs its calls to governance and sandbox-svc with this shared key, which every service accepts, and warns at start.",
  "egress proxy:INTERNAL_IDENTITY_PUBLIC_KEY": "Not read: the proxy is called by no service.",
  EGRESS_IDENTITY_PRIVATE_KEY:
    "egress proxy: an Ed25519 JWK of its own (`platform keys` prints the pair; the chart generates it into the keys Secret). It signs its calls to governance and sandbox-svc with it instead of the shared `INTERNAL_IDENTITY_PRIVATE_KEY`: governance accepts those for a sandbox's effective policy and `sandbox:egress` decisions only, sandbox-svc for a sandbox's egress facts and refusal records only, every other service refuses them (decisions 0062, 0065).",
  EGRESS_IDENTITY_PUBLIC_KEY:
    "governance-svc and sandbox-svc: the public half of the egress proxy's `EGRESS_IDENTITY_PRIVATE_KEY`; identities signed with it are accepted on the egress proxy's own calls only (governance: a sandbox's effective policy, `sandbox:egress` decisions; sandbox-svc: a sandbox's egress facts, refusal records). Unset: they are refused, and an egress proxy must sign with the shared key.",
  "egress proxy:SANDBOX_URL":
    "sandbox-svc's address: the proxy asks it for a sandbox's organization, project and labels and has it record refusals; it holds no database or bus setting (decision 0065).",
  EGRESS_SANDBOX_TIMEOUT_MS:
    "egress proxy: how long one call to sandbox-svc may take (default `3000`); a call that fails or takes longer refuses the sandbox's connection (503), logged once per refusal window.",
  AGENTPLANE_SECRET_KEY:
    "32 bytes, base64: encrypts secrets at rest (credentials, project signing keys). Generated into the data dir when embedded.",
  AGENTPLANE_SECRET_KEY_PREVIOUS:
    "The master key being rotated out: tenancy re-seals its project signing keys and waiting tokens, and governance re-wraps its credentials' data keys, under `AGENTPLANE_SECRET_KEY` when they start with both set.",
  AGENTPLANE_DATA_DIR: "Where the embedded platform keeps PGlite, the secret key and sandbox workspaces.",
  PUBLIC_URL: "The external address (activation links, the OpenAPI server); set it behind a TLS-terminating proxy.",
  // Where each service is, for the processes that call it
  TENANCY_URL: "tenancy-svc's address: identity, tenancy, authorization decisions.",
  SANDBOX_URL: "sandbox-svc's address.",
  AUDIT_URL: "audit-svc's address: audit records, usage and spend reservations.",
  GOVERNANCE_URL:
    "governance-svc's address: policy decisions and credentials (without it nothing is enforced and sandboxes have no egress).",
  CONNECTIONS_URL: "connections-svc's address.",
  INFERENCE_URL: "inference-proxy's address.",
  AGENT_RUNTIME_URL:
    "An agent runtime the gateway fronts at `/agent/` (UI, API for its project's members, webhooks); with AGENT_RUNTIME_PROJECT_ID.",
  AGENT_RUNTIME_PROJECT_ID:
    "The project whose members may use the fronted agent runtime (viewers read, developers chat, admins change settings).",
  AGENT_RUNTIME_TIMEOUT_MS:
    "How long the agent runtime at `/agent/` may take to start answering before the gateway answers a 504 (a turn asked for with `stream=false` answers when it ends; a live stream then runs on).",
  // The all-in-one
  AGENT_RUNTIME: "Start the agent runtime beside the control plane (`on`) or not (`off`).",
  AGENT_RUNTIME_PORT: "The agent runtime's port in the all-in-one.",
  AGENT_RUNTIME_HOST: "The agent runtime's listening address: loopback natively; the container image sets `0.0.0.0`.",
  // Identity
  AGENTPLANE_BOOTSTRAP_TOKEN:
    "At least 32 characters: the installation activates itself on first start and accepts exactly this string as the owner's API token. Never logged.",
  OIDC_ISSUER:
    "Accept bearer JWTs of this identity provider (discovery at `<issuer>/.well-known/openid-configuration`); users are provisioned on first sight.",
  OIDC_AUDIENCE: "The `aud` an OIDC token must carry (any when unset).",
  OIDC_MAX_CLOCK_SKEW_SECONDS: "How far an OIDC token's `iat` may be ahead of this host's clock.",
  OIDC_CLIENT_ID:
    "With `OIDC_ISSUER`: the console signs people in with the identity provider and the activation page offers signing in (authorization code + PKCE), with the setup code, to make that account the first owner. Register `<PUBLIC_URL>/sign-in/oidc/callback` as a redirect URI for the console.",
  OIDC_CLIENT_SECRET: "The OIDC client's secret, when the identity provider requires one.",
  OIDC_EMAIL_TRUST:
    "Which email of an OIDC token becomes its user's address, the one invitations are accepted by (the gateway's bearer tokens and the console's and activation page's sign-ins alike): `verified` takes it only when the token says `email_verified: true` (or the string `\"true\"`); `present` takes any the token does not mark unverified, for a provider that never sends the claim and whose users cannot change their address (never Microsoft Entra ID's mutable `email`). See docs/decisions/0036-oidc-email-trust.md.",
  OIDC_REDIRECT_URI:
    "The activation page's OIDC redirect URI registered with the identity provider (default `<PUBLIC_URL>/activate/callback`).",
  KEY_ROTATION_GRACE_SECONDS: "How long a rotated project signing key stays published in the project's JWKS.",
  RATE_LIMIT_PER_MINUTE:
    "Requests per token per minute (a WebSocket upgrade is one), or per client address for calls without one (an IPv6 client per /64); a 429 `rate-limited` problem past it. See docs/decisions/0045-an-upgrade-is-one-request.md.",
  RATE_LIMIT_PER_USER_PER_MINUTE:
    "Requests per minute of all of one user's API tokens and sessions together (default 4 × `RATE_LIMIT_PER_MINUTE`; at least `RATE_LIMIT_PER_MINUTE`): creating tokens does not multiply a user's budget. Clusters and sandboxes have only their own limit. Past it, a 429 `rate-limited` problem with `policy: \"per-user\"`. See docs/decisions/0040-per-user-rate-limit.md.",
  TRUSTED_PROXIES:
    "Load balancers or ingresses in front of the gateway (addresses or CIDR ranges, comma-separated): from them, the nearest untrusted address of `X-Forwarded-For` is the client's, for per-address rate limits and audit records (unset: the socket's peer).",
  // Sandboxes
  SANDBOX_DATA_DIR: "Workspaces and runtime files of the local driver (default `<data dir>/sandboxes`).",
  SANDBOX_INGRESS_HOST:
    "Reach exposed ports at `https://<slug>.<host>` and `https://<port>-<slug>.<host>` (needs a wildcard DNS record).",
  SANDBOX_INGRESS_TIMEOUT_MS:
    "How long an exposed sandbox port may take to answer once the request is sent before it is a 504 (a body may stream for longer; an answer may too).",
  SANDBOX_INGRESS_MAX_CONNECTIONS:
    "How many connections one sandbox's exposed ports may have open through the ingress at once (requests waiting for their answer, WebSockets; default `256`): each holds a relay process on the host. Past it, a 503 `service-unavailable` problem with `Retry-After` until one ends. See docs/decisions/0043-ingress-connections-per-sandbox.md.",
  SANDBOX_LOCAL_ISOLATION:
    "`bwrap` (namespaces through bubblewrap, the default) or `none` (no isolation; a warning at every start).",
  SANDBOX_HOST_UID:
    "The host user a root service runs local sandboxes as (default `65533`, a uid no one else should have): what a sandbox writes or runs is that user's, never root's. `0` maps sandboxes to root without capabilities, as before; the same happens, with a warning, when the kernel forbids user namespaces to users other than root. A data dir or image directory that user cannot reach (under `/root`, say) is bound for its sandboxes in a private mount namespace instead.",
  SANDBOX_IMAGES_JSON: 'Extra images of the local driver: `{"<name>": "<root filesystem dir>"}`.',
  SANDBOX_EGRESS_HOST_MAP:
    'Tests only: egress host names → local stand-ins (`{"registry.test":"127.0.0.1:8080"}`); leave unset in production.',
  SANDBOX_EGRESS_REFUSAL_WINDOW_MS:
    "How long repeats of one egress refusal (same sandbox, host, port and rule) are counted rather than audited one by one (default `60000`): the first is recorded at once, the rest in one record with `repeats` when the window ends.",
  SANDBOX_EGRESS_IDLE_TIMEOUT_MS:
    "How long a connection through the egress proxy (a CONNECT tunnel or a plain HTTP request) may carry no byte in either direction before both sides are ended (default `300000`, 5 min); one that carries bytes either way is never cut.",
  SANDBOX_EGRESS_ATTEMPTS_PER_SECOND:
    "New egress connection attempts (CONNECTs and plain HTTP requests) one sandbox may make per second, sustained (default `50`); past it and its burst, attempts are answered 429 `rate-limited` before anything is decided or dialed.",
  SANDBOX_EGRESS_ATTEMPT_BURST:
    "Egress connection attempts one sandbox may make at once before `SANDBOX_EGRESS_ATTEMPTS_PER_SECOND` applies (default `200`).",
  AGENTPLANE_API_URL: "The platform's API address as sandboxes (and the agent runtime's sandbox switch) reach it.",
  SANDBOX_DRIVER:
    "Where sandboxes run: `local` (bubblewrap on this host, the default) or `kubernetes` (a Pod each; the API server from in-cluster config or `KUBECONFIG`).",
  SANDBOX_K8S_NAMESPACE:
    "kubernetes driver: namespace of the sandbox Pods, claims and NetworkPolicies (default `agentplane-sandboxes`).",
  SANDBOX_K8S_DEFAULT_IMAGE:
    "kubernetes driver: the OCI image the `default` image stands for (default `docker.io/library/debian:12.12-slim`).",
  SANDBOX_K8S_SERVICE_ACCOUNT:
    "kubernetes driver: the permissionless service account sandbox Pods run as (default `agentplane-sandbox`; its token is never mounted).",
  SANDBOX_K8S_RUNTIME_CLASS: "kubernetes driver: RuntimeClass of sandbox Pods, e.g. `gvisor`.",
  SANDBOX_K8S_NODE_SELECTOR_JSON:
    'kubernetes driver: node selector of sandbox Pods (`{"agentplane.dev/pool":"sandboxes"}`).',
  SANDBOX_K8S_TOLERATIONS_JSON:
    'kubernetes driver: tolerations of sandbox Pods (`[{"key":"sandboxes","operator":"Exists","effect":"NoSchedule"}]`).',
  SANDBOX_K8S_STORAGE_CLASS: "kubernetes driver: StorageClass of workspace claims (the cluster's default when unset).",
  SANDBOX_K8S_SNAPSHOT_CLASS:
    "kubernetes driver: VolumeSnapshotClass of workspace snapshots taken for revisions; the cluster's default class when unset, and a tar stream over exec when the cluster has none.",
  SANDBOX_K8S_WORKSPACE_SIZE:
    "kubernetes driver: size of a workspace claim when the sandbox sets no `diskMiB` (default `10Gi`).",
  SANDBOX_K8S_START_TIMEOUT_SECONDS:
    "kubernetes driver: how long a start waits for the Pod to be Ready before failing with the scheduler's or kubelet's reason (default 300).",
  SANDBOX_K8S_DIAL_POD_IP:
    "kubernetes driver: `true` when sandbox-svc runs in the cluster: ports are dialled on the Pod's IP instead of `pods/portforward`.",
  SANDBOX_K8S_READ_ONLY_ROOT:
    "kubernetes driver: on, sandbox containers run with `readOnlyRootFilesystem: true` (for admission policies that require it) and get an emptyDir at `/tmp`, bounded as their ephemeral storage; the workspace stays writable. Off by default: an image that writes elsewhere (`/var`, `/etc`, `/usr/local`, a `HOME` moved out of the workspace) fails there with it on. See docs/decisions/0067-read-only-root-for-sandbox-pods.md.",
  SANDBOX_K8S_EGRESS_PROXY:
    "kubernetes driver: `<namespace>/<label>=<value>[,…]:<port>` of the egress proxy's Pods, the only egress a sandbox's NetworkPolicy allows (none when unset).",
  SANDBOX_K8S_EGRESS_PROXY_URL:
    "kubernetes driver: the egress proxy's Service as sandboxes dial it (`http://<host>:<port>`); each sandbox gets it with its own credential in `HTTPS_PROXY` and the other proxy variables (needs `SANDBOX_EGRESS_CREDENTIAL_KEY` or `AGENTPLANE_SECRET_KEY`).",
  SANDBOX_EGRESS_CREDENTIAL_KEY:
    "kubernetes driver and egress proxy: at least 32 bytes, base64; each sandbox's proxy credential is an HMAC of its id under it. sandbox-svc issues with it (derived from `AGENTPLANE_SECRET_KEY` when unset, as before the key was its own); the egress proxy verifies with it and holds no `AGENTPLANE_SECRET_KEY`. The chart generates it into the keys Secret.",
  EGRESS_PROXY_PORT:
    "egress proxy: the port sandbox Pods connect to (default 3128); its health endpoints stay on `PORT`.",
  SANDBOX_K8S_PLATFORM_PODS:
    "kubernetes driver: `<namespace>/<label>=<value>[,…]` of sandbox-svc's Pods, the only ones a sandbox's NetworkPolicy lets in.",
  SANDBOX_K8S_IMAGE_REGISTRIES:
    "kubernetes driver: comma-separated registries (`host[:port]`) sandbox images may come from (`docker.io` stands for a reference naming none); any when unset. Nodes pull with their own registry credentials and reach addresses tenants cannot, so name the public registries sandboxes need. An image from another is refused (422 `validation-failed`) at create, update and start.",
  // Tenant object limits (read by tenancy, governance, connections and sandbox)
  OBJECT_LIMITS: `How many objects of each kind an organization, project or user may hold, as comma-separated \`<kind>=<n>\` pairs (n from 1 to ${MAX_OBJECT_LIMIT}; e.g. \`connectors=2000,api-tokens=5000\`); a kind not named keeps its default: ${objectLimitDefaults}. Revoked or expired API tokens and sessions, answered or expired invitations and sandboxes being deleted do not count; a user's organizations are those they own; \`running-sandboxes\` counts an organization's sandboxes starting, running or stopping at once. A create or start past a limit answers 409 \`limit-exceeded\`. Distributed: give tenancy-svc, governance-svc, connections-svc and sandbox-svc the same value.`,
  // Governance
  CREDENTIAL_ROTATION_GRACE_SECONDS: "How long a rotated credential's previous secret stays resolvable.",
  GOVERNANCE_DRIFT_INTERVAL_SECONDS: "How often one replica audits every organization for drift.",
  // Connections
  CONNECTOR_ALLOWED_HOSTS:
    "Internal destinations tenants may aim at (connectors, discovery, AWS endpoints): comma-separated hosts, `host:port` pairs or CIDR ranges.",
  CONNECTIONS_REPLICA_ID: "This replica's name in cluster tunnel records (default: a generated one).",
  CONNECTIONS_REPLICA_URL:
    "This replica's own internal URL (e.g. `http://$(POD_IP):8085`), so others forward to the tunnel it holds.",
  CLUSTER_HEARTBEAT_MS: "How often the control plane expects a relay heartbeat.",
  CLUSTER_JWT_TTL_SECONDS: "Lifetime of the cluster JWTs the platform mints for relays.",
  CLUSTER_PROXY_TIMEOUT_MS:
    "How long a cluster proxy request may take before it is a 504 (Kubernetes bounds its own the same way); a watch or a followed log, only until its answer begins.",
  CLUSTER_TUNNEL_MAX_REQUESTS:
    "How many cluster proxy requests one cluster's tunnel carries at once, watches and followed logs included; one more is answered 429 with `Retry-After`.",
  AWS_UPSTREAM_TIMEOUT_MS:
    "How long an AWS endpoint may take to answer a proxied call or a connection test before it is a 504.",
  AWS_UPSTREAM_BODY_IDLE_MS:
    "How long a proxied AWS answer's body may go without a chunk (while the caller reads) before it is cut short; a small answer, or the connection test's, not read in time is a 504.",
  AWS_UPSTREAM_BODY_TIMEOUT_MS:
    "How long a proxied AWS answer's body (or the connection test's) may take from its headers to its end before it is cut short; raise it for large downloads through the proxy.",
  // Inference and spend
  CLOUD_A_BEARER_TOKEN:
    "Bearer API key for `cloud-a` (chosen automatically when set); the only credential of `cloud-a-alt` (as `x-api-key`).",
  CLOUD_A_ACCESS_KEY_ID: "Request-signing (SigV4) key id for `cloud-a`, an alternative to the bearer token.",
  CLOUD_A_SECRET_ACCESS_KEY: "Request-signing (SigV4) secret for `cloud-a`.",
  CLOUD_A_SESSION_TOKEN: "Session token for temporary `cloud-a` signing credentials.",
  CLOUD_A_REGION: "The `cloud-a` region (default `us-east-1`).",
  CLOUD_A_ENDPOINT_URL: "Endpoint override for `cloud-a` (private endpoints, tests).",
  CLOUD_A_ALT_BASE_URL: "Endpoint override for `cloud-a-alt`, up to `/anthropic`.",
  CLOUD_B_API_KEY: "Resource key for `cloud-b` (may be a `__managed_cred:<uuid>__` placeholder a proxy rewrites).",
  CLOUD_B_RESOURCE_NAME: "The `cloud-b` resource name; derives its chat and embeddings endpoints.",
  CLOUD_B_BASE_URL: "Overrides the derived `cloud-b` chat endpoint (must end at `/anthropic/v1`).",
  CLOUD_B_OPENAI_BASE_URL: "Overrides the `cloud-b` OpenAI-style endpoint (family-2).",
  INFERENCE_MAX_BODY_BYTES: "Model request body cap (a 413 problem above it).",
  PRICE_TABLE_JSON: "Price overrides as JSON, or a path to a JSON file, merged over the bundled price table.",
  AUDIT_RETENTION_DAYS: "Audit records older than this are pruned.",
  RESERVATION_RETENTION_DAYS: "Finished spend reservations are deleted this many days after they were opened.",
  // The cluster relay
  AGENTPLANE_URL: "The control plane's public base URL (`https://agentplane.example.com`).",
  CLUSTER_ID: "The registered cluster's id (`cl_…`).",
  TUNNEL_TOKEN_FILE: "A file holding the tunnel token; a rotated token is written back to it.",
  TUNNEL_TOKEN_SECRET: "Or a Kubernetes Secret holding it, `namespace/name`; a rotated token is written back to it.",
  TUNNEL_TOKEN_SECRET_KEY: "The key of the token inside that Secret.",
  HEARTBEAT_MS: "How often the relay sends a heartbeat down the tunnel.",
  AGENTPLANE_INSECURE_HTTP:
    "`1` lets `AGENTPLANE_URL` be plain http to another machine (a network you trust); without it the relay starts only with https or this machine's address.",
  // The agent runtime
  LLM_PROVIDER:
    "`cloud-a`, `cloud-a-alt` or `cloud-b`: the model provider the agent calls. `cloud-b` without `GATEWAY_API_URL` does not start while the process environment sets `ANTHROPIC_FOUNDRY_RESOURCE`, or `OPENAI_BASE_URL` with embeddings on: its SDK clients would refuse them next to the endpoints the runtime passes.",
  GATEWAY_API_URL:
    "Route model calls through this control plane's `/v1/llm` (no local model credential needed): the gateway's address, e.g. `http://localhost:8080`, without `/v1` (the runtime adds `/v1/llm/...`; a `/v1` in it stops the start).",
  GATEWAY_API_TOKEN: "The bearer token sent to the gateway with `GATEWAY_API_URL`.",
  CLOUD_A_MODEL_ID: "`cloud-a` main model.",
  CLOUD_A_CLASSIFICATION_MODEL_ID: "`cloud-a` fast model of the heartbeat DELIVER/SUPPRESS gate.",
  CLOUD_A_EMBEDDING_MODEL_ID: "`cloud-a` embedding model for searchable memory.",
  CLOUD_B_MODEL_ID: "`cloud-b` main model (chat deployment name).",
  CLOUD_B_CLASSIFICATION_MODEL_ID: "`cloud-b` fast deployment of the heartbeat gate.",
  CLOUD_B_EMBEDDING_MODEL_ID: "`cloud-b` embedding deployment (1024 dimensions); `''` skips embeddings.",
  CLOUD_B_API_VERSION: "`cloud-b` API version for embeddings only.",
  CONTEXT_WINDOW_TOKENS: "The context window assumed for a model the catalog does not know.",
  MODELS_DEV_URL: "A model-window catalog refreshed once at start; unset means no outbound call.",
  COMPACTION_THRESHOLD_PERCENT: "Context occupancy that triggers compaction after a turn (0 disables).",
  COMPACTION_TAIL_MESSAGES: "Newest messages kept verbatim by compaction.",
  HEARTBEAT_INTERVAL_MINUTES: "How often the heartbeat runs `HEARTBEAT.md`.",
  MEMORY_MAX_NOTES:
    "Memory notes the runtime keeps at most (1 to 1000000, default 10000); past it the `memory` tool refuses to remember, naming the limit, until notes are forgotten.",
  USAGE_RETENTION_DAYS:
    "Days the runtime keeps its usage records (model calls, voice sessions; `GET /agents/usage`); 0 keeps them all.",
  AGENT_HOME: "Install directory (`~/.agent`; `%USERPROFILE%\\.agent` on Windows); its `.env` is read at start.",
  AGENT_DATA_DIR: "Persistent dir for skills, plugins and the database (default `<AGENT_HOME>`).",
  AGENT_SECRET_KEY:
    "32 bytes, base64: encrypts the runtime's secrets at rest (webhook verification secrets, AES-256-GCM). Unset: generated into `<data dir>/secret.key`. An invalid key, or one that does not open the stored secrets, stops the start.",
  AGENT_SKILLS_DIR: "Skills directory override (default `<data dir>/skills`).",
  AGENT_PLUGINS_DIR: "Plugins directory override (default `<data dir>/plugins`).",
  SHELL_WORKSPACE_ROOT: "Working directory of the shell tools (default `<AGENT_HOME>/workspace`).",
  SHELL_PASS_ENV:
    "Comma-separated variables of the runtime's environment that local shell commands also get; by default they see only PATH, HOME, USER, LOGNAME, SHELL, LANG, LC_*, TERM, TZ, TMPDIR and the like, never the runtime's keys and tokens.",
  SHELL_ISOLATION:
    "`auto` (default): local shell commands run under bubblewrap (`bwrap`) when it works here, with the runtime's `.env`, secret key, database and meeting profile hidden, its folders read-only but for the workspace, skills and `HEARTBEAT.md`, and its processes out of sight (a command's background processes end with it); without it a warning is logged. `bubblewrap`: the start stops without it. `off`: never.",
  AGENT_ID: "Pins the agent's UUID (generated at first boot when unset).",
  AGENT_NAME: "The agent's display name at first boot.",
  TEAM_NAME: "The team name at first boot.",
  OWNER_USER_ID: "The owner's user id at first boot.",
  AGENT_HTTP_URL: "The runtime URL the terminal UI connects to; its host is one the runtime's API answers to.",
  AGENT_ALLOWED_HOSTS:
    "Comma-separated `Host` names the runtime's API answers to besides the loopback ones on its port and `AGENT_HTTP_URL`'s: names, `*.domain`, IP or `[IPv6]` addresses, each with an optional `:port`; `*` allows any. Others get 421. Listening on a non-loopback address (containers) with this unset, the runtime answers IP addresses, `localhost`, one-label names (services), `AGENT_HTTP_URL`'s host and the machine's name, on any port (decision 0063).",
  AGENTPLANE_TOKEN:
    "Sandbox switch: the token the runtime's shell tools use to run in a sandbox through `/v1/shell/exec`.",
  AGENTPLANE_PROJECT_ID: "Sandbox switch: the sandbox's project.",
  AGENTPLANE_SANDBOX_ID: "Sandbox switch: the sandbox the shell tools run in.",
  CHAT_BOT_TOKEN: "Team-chat bot token: enables the Slack adapter; validated with `auth.test` at boot.",
  CHAT_APP_TOKEN: "Team-chat app-level token for Socket Mode (required with `CHAT_BOT_TOKEN`).",
  CHAT_EXPECTED_APP_ID: "When set, the bot token's and the app token's app id must equal it, else team chat stays off.",
  CHAT_API_URL: "The Slack Web API base (private deployments, tests).",
  CHAT_MODE: "`personal` (the owner's direct messages) or `team` (linked channels).",
  CHAT_OWNER_ID: "The owner's Slack user id; unset: claimed by pairing with a one-time code logged at boot.",
  CHAT_ALLOW_BOTS:
    "`true` (or `1`, `yes`, `on`; default `false`): other bots' messages in linked channels run turns and are part of the re-read history (the bot's own never are).",
  CHAT_ALLOWED_CHANNELS:
    "Comma-separated Slack channel ids team mode may link and answer in; unset: every channel the bot is invited to, except externally shared (Slack Connect) ones, which are taken only when listed here.",
  CHAT_BOT_TURNS_MAX:
    "With `CHAT_ALLOW_BOTS`: how many turns other bots' messages may run in a row in one conversation (a thread, or a channel's top level) before a person writes there again; past it bots' messages are ignored, so two agents cannot answer each other without end. Default 3; 0: bots never run turns.",
  VOICE_API_KEY: "Enables voice meetings (may be a managed-credential placeholder).",
  VOICE_API_URL: "The realtime voice API's WebSocket URL (private deployments, tests; the vendor's by default).",
  VOICE_BROWSER_PATH: "The Chromium the meeting bot drives (default the system's `chromium`).",
  VOICE_BROWSER_SANDBOX:
    "Chromium's sandbox for the meeting bot: `auto` (default) uses it unless the runtime runs as root or it cannot start here, `on` requires it (voice is off without it), `off` never uses it.",
  VOICE_REALTIME_MODEL: "The realtime voice model.",
  VOICE_REALTIME_VOICE: "The realtime voice's name.",
  VOICE_TRANSCRIPTION_MODEL: "The transcriber that decides whether the agent was addressed.",
  MEETING_BOT_EMAIL: "The meeting account the agent signs in with (anonymous guests are auto-denied).",
  MEETING_BOT_PASSWORD: "That account's real password (typed into a sign-in form, so never a placeholder).",
  MEETING_TIMEOUT_MINUTES: "Hard cap of one call.",
  MEETING_ADMISSION_TIMEOUT_SECONDS: "The wait in the waiting room, counted from the join request.",
  TRACING_SECRET_KEY: "Enables LLM tracing (Langfuse secret key).",
  TRACING_PUBLIC_KEY: "The Langfuse public key.",
  TRACING_BASE_URL: "The Langfuse server.",
  OTEL_EXPORTER_OTLP_ENDPOINT: "Enables OpenTelemetry export (OTLP/HTTP) to this collector.",
  OTEL_EXPORTER_OTLP_API_KEY: "Sent to the collector as header `x-api-key`.",
  DEPLOYMENT_ENVIRONMENT: "Tag on telemetry: `production`, `staging` or `development`.",
};
