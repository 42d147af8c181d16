import {
  INTERNAL_IDENTITY_HEADER,
  ingressHeaderValue,
  parseIngressHost,
  REQUEST_ID_HEADER,
  SANDBOX_INGRESS_HEADER,
} from "@agentplane/contracts";
import { type InternalKeys, type ServiceFetch, signIdentity } from "@agentplane/service-kit";
import type { IngressRouter, IngressTarget } from "./ingress-router.ts";
import { pipeUpgrade, setUpgradeHeaders } from "./upgrade.ts";

/**
 * Ingress in the distributed mode: requests for sandbox hosts go to the sandbox service over HTTP
 * with the target in `x-agentplane-ingress` and the caller (if any) as an internal identity.
 */
export function createHttpIngress(options: {
  sandboxUrl: string;
  ingressHost: string;
  keys: InternalKeys;
  fetch: ServiceFetch;
}): IngressRouter {
  const identityOf = (target: IngressTarget) =>
    target.principal
      ? signIdentity(options.keys, target.principal, { audience: "sandbox" })
      : Promise.resolve(undefined);
  return {
    parse: (host) => parseIngressHost(host, options.ingressHost),
    async fetch(request, target) {
      const headers = new Headers(request.headers);
      headers.delete("authorization");
      headers.delete(INTERNAL_IDENTITY_HEADER);
      headers.set(SANDBOX_INGRESS_HEADER, ingressHeaderValue(target));
      if (target.requestId) headers.set(REQUEST_ID_HEADER, target.requestId);
      const identity = await identityOf(target);
      if (identity) headers.set(INTERNAL_IDENTITY_HEADER, identity);
      const hasBody = request.body !== null && request.method !== "GET" && request.method !== "HEAD";
      return options.fetch(
        new Request(request.url, {
          method: request.method,
          headers,
          ...(hasBody ? { body: request.body, duplex: "half" } : {}),
          redirect: "manual",
        } as RequestInit),
      );
    },
    upgrade(req, socket, head, target) {
      void identityOf(target).then(
        (identity) => {
          setUpgradeHeaders(req, {
            authorization: undefined,
            [SANDBOX_INGRESS_HEADER]: ingressHeaderValue(target),
            [INTERNAL_IDENTITY_HEADER]: identity,
          });
          pipeUpgrade(options.sandboxUrl, req, socket, head);
        },
        () => socket.destroy(),
      );
    },
  };
}
