import jsQR from 'jsqr'
import { expect } from 'vitest'

/** Tests only: reading our inline SVG QR codes back, for an independent decoder (jsQR). */

/**
 * Read the module grid back out of the SVG: the dark path is rows of `M x y.5` / `m dx 0` moves and
 * `h n` runs, one unit per module.
 */
export function svgToGrid(svg: string): boolean[][] {
  const size = Number(/viewBox="0 0 (\d+) \1"/.exec(svg)?.[1])
  expect(size).toBeGreaterThan(0)
  const d = /<path stroke="#000000" d="([^"]*)"\/>/.exec(svg)?.[1]
  expect(d).toBeDefined()
  const grid = Array.from({ length: size }, () => Array<boolean>(size).fill(false))
  let x = 0
  let y = 0
  for (const [, cmd, a, b] of d!.matchAll(/([MmHh])(-?[\d.]+)(?: (-?[\d.]+))?/g)) {
    const n = Number(a)
    if (cmd === 'M') {
      x = n
      y = Number(b) - 0.5
    } else if (cmd === 'm') {
      x += n
      expect(Number(b)).toBe(0)
    } else if (cmd === 'h') {
      for (let i = 0; i < n; i++) grid[y]![x + i] = true
      x += n
    } else {
      throw new Error(`unexpected path command ${cmd}`)
    }
  }
  return grid
}

/** Paint the grid black on white, `scale` pixels per module, as RGBA for jsQR. */
export function gridToRgba(grid: boolean[][], scale: number): { data: Uint8ClampedArray; width: number } {
  const width = grid.length * scale
  const data = new Uint8ClampedArray(width * width * 4).fill(255)
  for (let py = 0; py < width; py++) {
    for (let px = 0; px < width; px++) {
      if (!grid[Math.floor(py / scale)]![Math.floor(px / scale)]) continue
      const i = (py * width + px) * 4
      data[i] = data[i + 1] = data[i + 2] = 0
    }
  }
  return { data, width }
}

/** The text of the QR code an SVG of `qrSvg` draws, as jsQR reads it. */
export function decodeQrSvg(svg: string): string | undefined {
  const { data, width } = gridToRgba(svgToGrid(svg), 6)
  return jsQR(data, width, width)?.data
}
