/**
 * What Kubernetes clients read before any verb (discovery), for the `/k8s` surface: the core group
 * at v1 with pods (get, list) and their exec and attach subresources, and no named groups.
 * kubectl ≥ 1.30 first asks for the aggregated form (`APIGroupDiscoveryList`, by its Accept
 * header) of `/api` and `/apis`, and falls back to `/api`, `/apis` and `/api/v1` as plain JSON.
 */

interface Subresource {
  name: "exec" | "attach";
  kind: string;
  verbs: string[];
}

const POD_SUBRESOURCES: Subresource[] = [
  { name: "exec", kind: "PodExecOptions", verbs: ["create", "get"] },
  { name: "attach", kind: "PodAttachOptions", verbs: ["create", "get"] },
];

/** `GET /k8s/api/v1` (APIResourceList): pods and their subresources. */
export function coreResourceList() {
  return {
    kind: "APIResourceList" as const,
    apiVersion: "v1" as const,
    groupVersion: "v1" as const,
    resources: [
      {
        name: "pods",
        singularName: "pod",
        namespaced: true,
        kind: "Pod",
        verbs: ["get", "list"],
        shortNames: ["po"],
        categories: ["all"],
      },
      ...POD_SUBRESOURCES.map((s) => ({
        name: `pods/${s.name}`,
        singularName: "",
        namespaced: true,
        kind: s.kind,
        verbs: s.verbs,
      })),
    ],
  };
}

/** The aggregated discovery versions served, newest first, with the media type parameter each has. */
const AGGREGATED_VERSIONS = ["v2", "v2beta1"] as const;
type AggregatedVersion = (typeof AGGREGATED_VERSIONS)[number];

/**
 * The aggregated discovery version an Accept header asks for (`application/json;g=apidiscovery.k8s.io;
 * v=v2;as=APIGroupDiscoveryList`), or undefined for plain JSON.
 */
export function aggregatedDiscoveryVersion(accept: string | undefined): AggregatedVersion | undefined {
  if (!accept) return undefined;
  const asked = accept.split(",").map((range) => {
    const params = new Map<string, string>();
    for (const part of range.split(";").slice(1)) {
      const [key, value] = part.split("=").map((s) => s.trim());
      if (key && value) params.set(key, value);
    }
    return params;
  });
  for (const version of AGGREGATED_VERSIONS) {
    const wanted = asked.some(
      (p) => p.get("g") === "apidiscovery.k8s.io" && p.get("as") === "APIGroupDiscoveryList" && p.get("v") === version,
    );
    if (wanted) return version;
  }
  return undefined;
}

export function aggregatedContentType(version: AggregatedVersion): string {
  return `application/json;g=apidiscovery.k8s.io;v=${version};as=APIGroupDiscoveryList`;
}

/** The aggregated discovery document of `/k8s/api` (the core group) or `/k8s/apis` (no groups). */
export function aggregatedDiscovery(version: AggregatedVersion, which: "api" | "apis") {
  const core = {
    metadata: { creationTimestamp: null },
    versions: [
      {
        version: "v1",
        freshness: "Current",
        resources: [
          {
            resource: "pods",
            responseKind: { group: "", version: "", kind: "Pod" },
            scope: "Namespaced",
            singularResource: "pod",
            verbs: ["get", "list"],
            shortNames: ["po"],
            categories: ["all"],
            subresources: POD_SUBRESOURCES.map((s) => ({
              subresource: s.name,
              responseKind: { group: "", version: "", kind: s.kind },
              verbs: s.verbs,
            })),
          },
        ],
      },
    ],
  };
  return {
    kind: "APIGroupDiscoveryList" as const,
    apiVersion: `apidiscovery.k8s.io/${version}`,
    metadata: {},
    items: which === "api" ? [core] : [],
  };
}
