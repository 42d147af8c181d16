// Creates the platform's keys Secret once (a Helm pre-install/pre-upgrade hook). An existing Secret
// keeps its keys, so upgrades keep them; one made before the egress proxy had keys of its own gets
// SANDBOX_EGRESS_CREDENTIAL_KEY and the EGRESS_IDENTITY_* pair added, nothing else changed. Run
// with the image's Node, no other dependency.
import { createPrivateKey, createPublicKey, generateKeyPairSync, hkdfSync, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";

const SA = process.env.SERVICE_ACCOUNT_DIR ?? "/var/run/secrets/kubernetes.io/serviceaccount";
const api = process.env.KUBERNETES_API ?? "https://kubernetes.default.svc";
const namespace = process.env.SECRET_NAMESPACE ?? readFileSync(`${SA}/namespace`, "utf8").trim();
const name = process.env.SECRET_NAME;
if (!name) throw new Error("SECRET_NAME is not set");
const headers = {
  authorization: `Bearer ${readFileSync(`${SA}/token`, "utf8").trim()}`,
  "content-type": "application/json",
};

const EGRESS_KEY = "SANDBOX_EGRESS_CREDENTIAL_KEY";
// The egress proxy's own identity pair (decision 0062): it signs with the private half, governance
// accepts its identities for egress decisions only with the public half.
const EGRESS_IDENTITY_PRIVATE = "EGRESS_IDENTITY_PRIVATE_KEY";
const EGRESS_IDENTITY_PUBLIC = "EGRESS_IDENTITY_PUBLIC_KEY";

/** A new Ed25519 pair as JWK JSON, as `platform keys` prints it. */
function ed25519Pair() {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  return {
    privateJwk: JSON.stringify(privateKey.export({ format: "jwk" })),
    publicJwk: JSON.stringify(publicKey.export({ format: "jwk" })),
  };
}

/** The egress identity keys a Secret lacks: a new pair, or the public half of its private key. */
function egressIdentityAdditions(data) {
  if (data[EGRESS_IDENTITY_PRIVATE] && data[EGRESS_IDENTITY_PUBLIC]) return {};
  if (data[EGRESS_IDENTITY_PRIVATE]) {
    const jwk = JSON.parse(Buffer.from(data[EGRESS_IDENTITY_PRIVATE], "base64").toString("utf8"));
    const publicKey = createPublicKey(createPrivateKey({ key: jwk, format: "jwk" }));
    return { [EGRESS_IDENTITY_PUBLIC]: JSON.stringify(publicKey.export({ format: "jwk" })) };
  }
  const pair = ed25519Pair();
  return { [EGRESS_IDENTITY_PRIVATE]: pair.privateJwk, [EGRESS_IDENTITY_PUBLIC]: pair.publicJwk };
}

const existing = await fetch(`${api}/api/v1/namespaces/${namespace}/secrets/${name}`, { headers });
if (existing.status === 200) {
  const data = (await existing.json()).data ?? {};
  const additions = {};
  if (!data[EGRESS_KEY] && data.AGENTPLANE_SECRET_KEY) {
    // The key sandbox-svc has derived its sandboxes' egress credentials from AGENTPLANE_SECRET_KEY
    // with (apps/sandbox-svc/src/driver/kubernetes/egress-credential.ts): running sandboxes keep
    // proving themselves to the proxy, which now holds this key and not the master secret.
    const master = Buffer.from(data.AGENTPLANE_SECRET_KEY, "base64").toString("utf8");
    additions[EGRESS_KEY] = Buffer.from(
      hkdfSync("sha256", master, "agentplane", "sandbox egress proxy credential v1", 32),
    ).toString("base64");
  }
  Object.assign(additions, egressIdentityAdditions(data));
  const added = Object.keys(additions);
  if (added.length === 0) {
    console.log(`secret ${namespace}/${name} exists; keys kept`);
    process.exit(0);
  }
  // A merge patch: every key already there is left as it is.
  const patched = await fetch(`${api}/api/v1/namespaces/${namespace}/secrets/${name}`, {
    method: "PATCH",
    headers: { ...headers, "content-type": "application/merge-patch+json" },
    body: JSON.stringify({
      data: Object.fromEntries(added.map((key) => [key, Buffer.from(additions[key]).toString("base64")])),
    }),
  });
  if (patched.status !== 200) {
    throw new Error(`adding ${added.join(", ")} to secret ${name}: HTTP ${patched.status} ${await patched.text()}`);
  }
  console.log(`secret ${namespace}/${name} exists; keys kept, ${added.join(", ")} added`);
  process.exit(0);
}
if (existing.status !== 404)
  throw new Error(`reading secret ${name}: HTTP ${existing.status} ${await existing.text()}`);

const { privateKey } = generateKeyPairSync("ed25519");
const jwk = privateKey.export({ format: "jwk" });
const egressIdentity = ed25519Pair();
const body = {
  apiVersion: "v1",
  kind: "Secret",
  metadata: {
    name,
    namespace,
    labels: { "app.kubernetes.io/name": "agentplane", "app.kubernetes.io/component": "keys" },
  },
  type: "Opaque",
  stringData: {
    INTERNAL_IDENTITY_PRIVATE_KEY: JSON.stringify(jwk),
    AGENTPLANE_SECRET_KEY: randomBytes(32).toString("base64"),
    // The egress proxy's own key (sandboxes' proxy credentials), unrelated to the master secret.
    [EGRESS_KEY]: randomBytes(32).toString("base64"),
    // The egress proxy signs its calls to governance with its own key, not the shared one.
    [EGRESS_IDENTITY_PRIVATE]: egressIdentity.privateJwk,
    [EGRESS_IDENTITY_PUBLIC]: egressIdentity.publicJwk,
  },
};
const created = await fetch(`${api}/api/v1/namespaces/${namespace}/secrets`, {
  method: "POST",
  headers,
  body: JSON.stringify(body),
});
// 409: another run created it first, which is just as good.
if (created.status !== 201 && created.status !== 409) {
  throw new Error(`creating secret ${name}: HTTP ${created.status} ${await created.text()}`);
}
console.log(`secret ${namespace}/${name} ${created.status === 201 ? "created" : "exists"}`);
