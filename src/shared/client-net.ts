import { isIP } from 'node:net'

/**
 * The network a client address stands for, where a window or a lock counts clients: an IPv4 address
 * as it is (IPv4-mapped IPv6 too), an IPv6 address by its /64, which one network holds as a whole
 * (one host is routinely given a whole /64, so single addresses would be free to rotate). Used by
 * the operators' sign-in lockout and the Lightning Address per-client window.
 */
export function clientNet(ip: string | null): string {
  if (!ip) return ''
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip)
  if (mapped) return mapped[1]!
  const bare = ip.replace(/%.*$/, '')
  if (isIP(bare) !== 6) return ip
  const [head = '', tail] = bare.toLowerCase().split('::')
  const groups = (part: string): string[] =>
    part === '' ? [] : part.split(':').flatMap((g) => (g.includes('.') ? ['0', '0'] : [g]))
  const h = groups(head)
  const t = tail === undefined ? [] : groups(tail)
  const all =
    tail === undefined ? h : [...h, ...Array<string>(Math.max(0, 8 - h.length - t.length)).fill('0'), ...t]
  return `${all
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`
}
