/** The provider family of a canonical model name: the models an unknown one is priced among. */
export type ModelFamily = "anthropic" | "amazon" | "openai";

export const FAMILIES: readonly [RegExp, ModelFamily][] = [
  [/^claude-/, "anthropic"],
  [/^(?:nova-|titan-)/, "amazon"],
  [/^(?:gpt-|o\d|chatgpt-|text-embedding-|davinci|babbage)/, "openai"],
];

export function modelFamily(model: string): ModelFamily | undefined {
  const canonical = canonicalModel(model);
  for (const [pattern, family] of FAMILIES) if (pattern.test(canonical)) return family;
  return undefined;
}

/**
 * One name per model across providers: `claude-sonnet-4-5-20250929` (Anthropic API),
 * `us.anthropic.claude-sonnet-4-5-20250929-v1:0` (Bedrock inference profile),
 * `claude-sonnet-4-5@20250929` (Vertex) and `claude-sonnet-4-5` (Foundry, aliases) all become
 * `claude-sonnet-4-5`; OpenAI's dated snapshots (`gpt-4o-2024-08-06`) become `gpt-4o`.
 */
export function canonicalModel(model: string): string {
  return model
    .toLowerCase()
    .replace(/^(?:[a-z]{2,6}\.)?(?:anthropic|amazon)\./, "")
    .replace(/-v\d+(?::\d+)?$/, "")
    .replace(/[@-]\d{8}$/, "")
    .replace(/-\d{4}-\d{2}-\d{2}$/, "")
    .replace(/-latest$/, "");
}
