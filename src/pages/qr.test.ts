import jsQR from 'jsqr'
import QRCode from 'qrcode'
import { describe, expect, it } from 'vitest'
import { QR_TEXT_MAX_CHARS, qrSvg } from './qr.js'
import { BIP84_ADDRESS, BOLT11_COFFEE } from './testing.js'
import { gridToRgba, svgToGrid } from './qr-testing.js'

const URIS = [
  ['a BOLT11 invoice', `lightning:${BOLT11_COFFEE}`],
  ['a BIP21 URI', `bitcoin:${BIP84_ADDRESS}?amount=0.0025`],
  [
    'a BIP21 URI with a label',
    `bitcoin:${BIP84_ADDRESS}?amount=0.00001&label=Caf%C3%A9%20S%C3%A0i%20G%C3%B2n`,
  ],
] as const

describe('qrSvg', () => {
  it.each(URIS)('encodes %s exactly, decodable back to the same text', async (_name, uri) => {
    const svg = await qrSvg(uri)
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg" ')).toBe(true)
    expect(svg.endsWith('</svg>')).toBe(true)

    // The SVG's modules are those of the library's own symbol at level M with a 2-module margin.
    const expected = QRCode.create(uri, { errorCorrectionLevel: 'M' })
    const grid = svgToGrid(svg)
    const margin = 2
    const size = expected.modules.size
    expect(grid.length).toBe(size + 2 * margin)
    for (let r = 0; r < grid.length; r++) {
      for (let c = 0; c < grid.length; c++) {
        const inside = r >= margin && c >= margin && r < size + margin && c < size + margin
        const dark = inside && expected.modules.data[(r - margin) * size + (c - margin)] === 1
        expect(grid[r]![c], `module ${r},${c}`).toBe(dark)
      }
    }

    // The comparison is sensitive to the level: a level L symbol of the same text differs.
    const levelL = QRCode.create(uri, { errorCorrectionLevel: 'L' })
    expect(Array.from(levelL.modules.data)).not.toEqual(Array.from(expected.modules.data))

    // An independent decoder reads the very same string back.
    const { data, width } = gridToRgba(grid, 6)
    const decoded = jsQR(data, width, width)
    expect(decoded?.data).toBe(uri)
  })

  it('refuses empty or oversized text', async () => {
    await expect(qrSvg('')).rejects.toThrow()
    await expect(qrSvg('x'.repeat(QR_TEXT_MAX_CHARS + 1))).rejects.toThrow()
  })
})
