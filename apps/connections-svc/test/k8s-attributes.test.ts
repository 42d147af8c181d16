import { describe, expect, it } from "vitest";
import { parseKubeRequest } from "../src/clusters/k8s-attributes.ts";

const actionOf = (method: string, path: string, query = "") =>
  parseKubeRequest(method, path, new URLSearchParams(query)).action;

describe("the governed action of a Kubernetes request", () => {
  it("is cluster:exec for every way of running a command in a Pod", () => {
    expect(actionOf("POST", "/api/v1/namespaces/a/pods/p/exec", "command=sh")).toBe("cluster:exec");
    expect(actionOf("GET", "/api/v1/namespaces/a/pods/p/attach")).toBe("cluster:exec");
    expect(actionOf("POST", "/api/v1/namespaces/a/pods/p/portforward")).toBe("cluster:exec");
    // An ephemeral container's command runs in the Pod: adding one is running a command.
    expect(actionOf("PATCH", "/api/v1/namespaces/a/pods/p/ephemeralcontainers")).toBe("cluster:exec");
    expect(actionOf("PUT", "/api/v1/namespaces/a/pods/p/ephemeralcontainers")).toBe("cluster:exec");
    // The kubelet's API behind a node's proxy runs commands in any Pod of the node.
    expect(actionOf("POST", "/api/v1/nodes/n1/proxy/run/a/p/c", "cmd=id")).toBe("cluster:exec");
    expect(actionOf("GET", "/api/v1/nodes/n1/proxy/exec/a/p/c")).toBe("cluster:exec");
  });

  it("keeps reads and other writes to their verbs", () => {
    expect(actionOf("GET", "/api/v1/namespaces/a/pods/p/ephemeralcontainers")).toBe("cluster:get");
    expect(actionOf("PATCH", "/api/v1/namespaces/a/pods/p")).toBe("cluster:patch");
    expect(actionOf("GET", "/api/v1/namespaces/a/pods/p/log")).toBe("cluster:get");
    expect(actionOf("GET", "/api/v1/nodes/n1")).toBe("cluster:get");
    expect(actionOf("GET", "/api/v1/nodes")).toBe("cluster:list");
  });
});
