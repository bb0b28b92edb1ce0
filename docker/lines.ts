/**
 * Split a stream of text chunks into lines, carrying a partial line over to the
 * next chunk (build logs and JSON event streams arrive cut at arbitrary bytes).
 */
export class LineSplitter {
  private partial = '';

  /** Feed a chunk; returns the lines it completed (without their terminators). */
  push(chunk: string): string[] {
    const text = this.partial + chunk;
    const parts = text.split(/\r?\n/);
    this.partial = parts.pop() ?? '';
    return parts;
  }

  /** The trailing line without a terminator, if any; resets the splitter. */
  flush(): string[] {
    const rest = this.partial;
    this.partial = '';
    return rest === '' ? [] : [rest];
  }
}

/** Keep only the last `size` items pushed (the log tail shown when a build fails). */
export class Tail<T> {
  private readonly items: T[] = [];
  private readonly size: number;

  constructor(size: number) {
    this.size = size;
  }

  push(item: T): void {
    this.items.push(item);
    if (this.items.length > this.size) this.items.shift();
  }

  values(): T[] {
    return [...this.items];
  }
}
