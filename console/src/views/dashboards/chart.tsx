import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

const HEIGHTS = { compact: 110, standard: 200, tall: 340 } as const;

/**
 * A time series drawn by uPlot (docs/decisions.md): it sizes itself to its container and
 * redraws when the container's width changes (a phone turned, a sidebar closed). Each point is
 * `[time, value]`, as a series answers it (the SDK's answers type a pair as an array).
 */
export function Chart({ points, unit, height, label }: { points: number[][]; unit: string; height: keyof typeof HEIGHTS; label: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const data: uPlot.AlignedData = [points.map((p) => p[0]), points.map((p) => p[1])];
    const plot = new uPlot(
      {
        width: Math.max(120, el.clientWidth),
        height: HEIGHTS[height],
        // The legend names the series beside its colour and, as the pointer moves over the
        // chart, says the time and value under it (uPlot's own cursor and live legend).
        legend: { show: true, live: true },
        cursor: { drag: { x: false, y: false }, points: { size: 7 } },
        scales: { y: { range: (_u, min, max) => [Math.min(0, min), Math.max(1, max)] } },
        axes: [{ stroke: '#5b6472' }, { stroke: '#5b6472', label: unit, size: 48 }],
        series: [
          { label: 'Time', value: (_u, v) => (v == null ? '—' : new Date(v * 1000).toLocaleString()) },
          { label, stroke: '#1f5fbf', fill: 'rgba(31,95,191,0.12)', width: 2, points: { show: false }, value: (_u, v) => (v == null ? '—' : `${v} ${unit}`) },
        ],
      },
      data,
      el,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(120, el.clientWidth), height: HEIGHTS[height] }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [points, unit, height, label]);
  const latest = points.at(-1)?.[1];
  return <div class="chart" ref={box} role="img" aria-label={`${label}: ${points.length} points, latest ${latest ?? 'none'} ${unit}`} />;
}
