import { PerformanceObserver, constants } from 'node:perf_hooks';
import v8 from 'node:v8';

/**
 * The V8 heap in use just after the latest major (mark-compact) collection: what the process
 * retains. `nodejs_heap_size_used_bytes` is read at the scrape, anywhere in the collector's cycle,
 * so it also counts the garbage awaiting the next collection (the hour-long soak saw samples of
 * 66 to 205 MB from one server whose retained heap was 75-90 MB); a leak shows here without that
 * noise. Read when the collection's performance entry is delivered (the next turn of the event
 * loop), so it may include a little allocated since. One observer per process: the apps of a test
 * process share it.
 */
let retained: number | null = null;
let observer: PerformanceObserver | null = null;

/** Starts watching the major collections (once per process); later calls do nothing. */
export function watchRetainedHeap(): void {
  if (observer) return;
  observer = new PerformanceObserver((list) => {
    if (list.getEntries().some((e) => (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR)) {
      retained = v8.getHeapStatistics().used_heap_size;
    }
  });
  observer.observe({ entryTypes: ['gc'] });
}

/** The heap retained at the latest major collection since watching began; null before the first. */
export function retainedHeapBytes(): number | null {
  return retained;
}
