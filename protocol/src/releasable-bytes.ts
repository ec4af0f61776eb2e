/**
 * ES2024's resizable ArrayBuffer, which Node 20's V8 has (this repository compiles against ES2023's types).
 * V8 maps its memory apart from the allocator's heap and unmaps it when it is shrunk: memory given back to
 * the system at once, where a plain buffer's waits for V8's next collection and then may stay in the C
 * heap, fragmented (measured: 100 MiB of RSS still there 5 s after 100 connections' lines were let go).
 */
type Resizable = ArrayBuffer & { resize(byteLength: number): void; readonly resizable: boolean; readonly maxByteLength: number };
const ResizableArrayBuffer = ArrayBuffer as unknown as new (byteLength: number, options: { maxByteLength: number }) => Resizable;

/**
 * `n` zeroed bytes whose memory {@link releaseBytes} gives back to the system at once, and which
 * {@link growBytes} can grow in place up to `maxBytes` (default `n`). Costs a few system calls more than a
 * plain array (tens of µs), and whole pages: meant for blocks of tens of KiB and more.
 */
export function releasableBytes(n: number, maxBytes = n): Uint8Array {
  return new Uint8Array(new ResizableArrayBuffer(n, { maxByteLength: maxBytes }), 0, n);
}

/** How far {@link growBytes} can grow `bytes` (made by {@link releasableBytes}): its `maxBytes`; else its length. */
export function maxBytesOf(bytes: Uint8Array): number {
  const buffer = bytes.buffer as Resizable;
  return buffer.resizable === true ? buffer.maxByteLength : bytes.length;
}

/**
 * `bytes` (made by {@link releasableBytes}, starting at its first byte) grown in place to `n` bytes, at
 * most {@link maxBytesOf} it: a view of all `n`, the new ones zeroed; the memory is the same, so other
 * views of it stay valid.
 * @throws RangeError past its `maxBytes`.
 */
export function growBytes(bytes: Uint8Array, n: number): Uint8Array {
  const buffer = bytes.buffer as Resizable;
  buffer.resize(n);
  return new Uint8Array(buffer, 0, n);
}

/**
 * Gives back the memory of `bytes` if it was made by {@link releasableBytes} (every view of it reads as
 * empty from then on); a no-op for any other array. The caller must hold no other use of it, such as a
 * write still in progress.
 */
export function releaseBytes(bytes: Uint8Array): void {
  const buffer = bytes.buffer as Resizable;
  if (buffer.resizable === true) buffer.resize(0);
}
