/**
 * A running sandbox's row as sandbox-svc records it, for a test that needs one without a driver
 * (deciding its egress needs no Pod): `values` name it and override the rest (labels, env, ...).
 */
export function runningSandboxRow(values: { id: string } & Record<string, unknown>) {
  const now = new Date();
  return {
    name: values.id,
    slug: values.id.replace(/_/g, "-"),
    image: "default",
    command: null,
    env: {},
    resources: {},
    ports: [],
    idle_timeout_seconds: 0,
    labels: {},
    state: "running",
    current_revision: 1,
    created_at: now,
    updated_at: now,
    started_at: now,
    last_activity_at: now,
    ...values,
  } as never;
}
