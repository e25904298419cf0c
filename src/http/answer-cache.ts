/**
 * Answers already written, by a key that names exactly one answer (a versioned list's ETag),
 * the least recently used dropped first once their text passes `maxChars`: a bound on the memory
 * they hold, whatever the number of lists.
 */
export class AnswerCache {
  private readonly answers = new Map<string, string>();
  private chars = 0;

  constructor(private readonly maxChars: number) {}

  get(key: string): string | undefined {
    const answer = this.answers.get(key);
    if (answer === undefined) return undefined;
    // Map keeps insertion order: moved to the end, it is the last to go.
    this.answers.delete(key);
    this.answers.set(key, answer);
    return answer;
  }

  set(key: string, answer: string): void {
    if (answer.length > this.maxChars) return;
    const before = this.answers.get(key);
    if (before !== undefined) {
      this.answers.delete(key);
      this.chars -= before.length;
    }
    this.answers.set(key, answer);
    this.chars += answer.length;
    for (const [oldest, text] of this.answers) {
      if (this.chars <= this.maxChars) break;
      this.answers.delete(oldest);
      this.chars -= text.length;
    }
  }

  get size(): number {
    return this.answers.size;
  }

  get heldChars(): number {
    return this.chars;
  }
}
