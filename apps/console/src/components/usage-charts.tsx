import { Bar, BarChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";

/**
 * The usage charts (Recharts), in a chunk of their own loaded with the usage page, so the main
 * bundle does not carry the charting library.
 */
export interface DayPoint {
  day: string;
  costUsd: number;
  requests: number;
}

const money = (v: number) => `$${v.toFixed(v < 1 && v > 0 ? 4 : 2)}`;
/** Long keys (model ids) keep their distinctive end on the axis; the table below has them whole. */
const tail = (v: string) => (v.length > 24 ? `…${v.slice(-23)}` : v);

export function CostByDayChart({ points }: { points: DayPoint[] }) {
  return (
    <figure data-testid="chart-by-day" aria-label="Cost by day" className="h-64 w-full">
      <ResponsiveContainer width="100%" height="100%">
        <BarChart data={points} margin={{ top: 8, right: 8, bottom: 8, left: 8 }}>
          <CartesianGrid strokeDasharray="3 3" stroke="#94a3b8" strokeOpacity={0.4} />
          <XAxis dataKey="day" tick={{ fontSize: 11 }} />
          <YAxis tickFormatter={money} tick={{ fontSize: 11 }} width={70} />
          <Tooltip formatter={(v) => money(Number(v))} />
          <Bar dataKey="costUsd" name="Cost" fill="#4f46e5" isAnimationActive={false} />
        </BarChart>
      </ResponsiveContainer>
    </figure>
  );
}

export function CostByGroupChart({
  label,
  testId,
  rows,
}: {
  label: string;
  testId: string;
  rows: { label: string; costUsd: number }[];
}) {
  return (
    <figure data-testid={testId} aria-label={label} className="h-56 w-full">
      <ResponsiveContainer width="100%" height="100%">
        <BarChart data={rows} layout="vertical" margin={{ top: 8, right: 8, bottom: 8, left: 8 }}>
          <CartesianGrid strokeDasharray="3 3" stroke="#94a3b8" strokeOpacity={0.4} />
          <XAxis type="number" tickFormatter={money} tick={{ fontSize: 11 }} />
          <YAxis type="category" dataKey="label" width={170} tick={{ fontSize: 11 }} tickFormatter={tail} />
          <Tooltip formatter={(v) => money(Number(v))} />
          <Bar dataKey="costUsd" name="Cost" fill="#0d9488" isAnimationActive={false} />
        </BarChart>
      </ResponsiveContainer>
    </figure>
  );
}

export default { CostByDayChart, CostByGroupChart };
