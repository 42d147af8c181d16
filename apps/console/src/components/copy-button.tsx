import { useState } from "react";
import { Button } from "./ui.tsx";

/**
 * Copies `text` to the clipboard and says so ("Copied"). `hint` is read to screen readers after
 * the label, naming what is copied when a page shows several of these buttons.
 */
export function CopyButton({ text, label = "Copy", hint }: { text: string; label?: string; hint?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <Button
      onClick={async () => {
        await navigator.clipboard?.writeText(text).catch(() => {});
        setCopied(true);
      }}
    >
      {copied ? "Copied" : label}
      {hint ? <span className="sr-only"> {hint}</span> : null}
    </Button>
  );
}
