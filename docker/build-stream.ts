/**
 * The daemon's JSON-lines build (and import) stream: log lines forwarded as
 * they complete, and the error event a failing step sends instead of failing
 * the request.
 */
import { apiError } from './api-error.ts';
import { LineSplitter, Tail } from './lines.ts';

/** Log lines kept for the error of a failed build. */
const ERROR_TAIL_LINES = 20;

/** One JSON message of the build stream. */
interface BuildEvent {
  stream?: string;
  status?: string;
  progress?: string;
  error?: string;
  errorDetail?: { message?: string };
  aux?: { ID?: string };
}

export interface BuildStreamOutcome {
  /** Set when the stream carried an error event (a failing RUN does not reject the request). */
  error: string | undefined;
  tail: string[];
}

/** Read the build's JSON-lines stream to the end, forwarding log lines as they complete. */
export async function readBuildStream(
  response: AsyncIterable<unknown> | NodeJS.ReadableStream,
  onProgress?: (line: string) => void,
): Promise<BuildStreamOutcome> {
  const jsonLines = new LineSplitter();
  const logLines = new LineSplitter();
  const tail = new Tail<string>(ERROR_TAIL_LINES);
  let error: string | undefined;
  const emit = (line: string): void => {
    tail.push(line);
    onProgress?.(line);
  };
  const handle = (raw: string): void => {
    if (raw.trim() === '') return;
    let event: BuildEvent;
    try {
      event = JSON.parse(raw) as BuildEvent;
    } catch {
      emit(raw);
      return;
    }
    if (typeof event.stream === 'string') for (const l of logLines.push(event.stream)) emit(l);
    if (typeof event.status === 'string') emit([event.status, event.progress].filter(Boolean).join(' '));
    if (event.error !== undefined || event.errorDetail !== undefined) {
      for (const l of logLines.flush()) emit(l);
      error = event.errorDetail?.message ?? event.error ?? 'unknown build error';
      emit(error);
    }
  };
  // A chunk may end inside a multi-byte character.
  const decoder = new TextDecoder();
  try {
    for await (const chunk of response as AsyncIterable<Buffer | string>) {
      const text = typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
      for (const raw of jsonLines.push(text)) handle(raw);
    }
  } catch (e) {
    throw apiError('reading the build log', e);
  }
  for (const raw of jsonLines.flush()) handle(raw);
  for (const l of logLines.flush()) emit(l);
  return { error, tail: tail.values() };
}
