// Creates the platform's keys Secret once (a Helm pre-install/pre-upgrade hook). An existing Secret
// is never touched, so upgrades keep the keys; run with the image's Node, no other dependency.
import { generateKeyPairSync, randomBytes } from "node:crypto";
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

const existing = await fetch(`${api}/api/v1/namespaces/${namespace}/secrets/${name}`, { headers });
if (existing.status === 200) {
  console.log(`secret ${namespace}/${name} exists; keys kept`);
  process.exit(0);
}
if (existing.status !== 404)
  throw new Error(`reading secret ${name}: HTTP ${existing.status} ${await existing.text()}`);

const { privateKey } = generateKeyPairSync("ed25519");
const jwk = privateKey.export({ format: "jwk" });
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
