import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { kubeconfigFor, startKubeStandIn } from "../../../apps/cluster-relay/test/fixtures/kube-stand-in.ts";
import { spawnNode } from "../processes.ts";

/**
 * The cluster relay as an operator runs it (its own process, the tunnel token in a file) in front
 * of a Kubernetes API stand-in, dialling the platform's tunnel.
 */
export async function startRelay(args: { url: string; clusterId: string; tunnelToken: string }) {
  const kube = await startKubeStandIn({ gitVersion: "v1.32.4" });
  const dir = mkdtempSync(join(tmpdir(), "console-relay-"));
  const tokenFile = join(dir, "token");
  const kubeconfig = join(dir, "kubeconfig");
  writeFileSync(tokenFile, `${args.tunnelToken}\n`, { mode: 0o600 });
  writeFileSync(kubeconfig, kubeconfigFor(kube));
  const relay = spawnNode("apps/cluster-relay/src/main.ts", [], {
    AGENTPLANE_URL: args.url,
    CLUSTER_ID: args.clusterId,
    TUNNEL_TOKEN_FILE: tokenFile,
    KUBECONFIG: kubeconfig,
    HEARTBEAT_MS: "1000",
  });
  return {
    relay,
    async stop() {
      await relay.stop();
      await kube.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
