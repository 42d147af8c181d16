import { k8sListPodsRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { SandboxContext } from "../../context.ts";
import { toPod } from "../../services/k8s-pods.ts";
import { fieldSelector, labelSelector } from "../../services/k8s-selectors.ts";
import type { SandboxRow } from "../../services/mapping.ts";
import { listSandboxes } from "../../services/sandboxes.ts";

/** Rows read per query: the list has no paging, so every page is read (a project's count is bounded). */
const PAGE = 500;

export function registerK8sListPods(app: ServiceApp, ctx: SandboxContext): void {
  app.openapi(k8sListPodsRoute, async (c) => {
    const { projectId } = c.req.valid("param");
    const query = c.req.valid("query");
    await authorize(c, ctx.authorizer, "sandboxes:read", { projectId });
    // `kubectl get pods -l app=web` and `--field-selector status.phase=Running` narrow the list.
    const labels = labelSelector(query.labelSelector ?? "");
    const fields = fieldSelector(query.fieldSelector ?? "");
    // A Kubernetes client takes a list without `metadata.continue` as the whole list: one cut at
    // a page would hide the project's oldest sandboxes from it without a word.
    const rows: SandboxRow[] = [];
    let cursor: string | undefined;
    do {
      const page = await listSandboxes(ctx, projectId, { limit: PAGE, ...(cursor ? { cursor } : {}) });
      rows.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor);
    return c.json(
      {
        apiVersion: "v1" as const,
        kind: "PodList" as const,
        metadata: {},
        items: rows.map(toPod).filter((pod) => labels(pod) && fields(pod)),
      },
      200,
    );
  });
}
