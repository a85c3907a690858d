/**
 * `svcpay rails check` for the Esplora rail: whether the index answers, serves the configured
 * network (told by its genesis block), and has a recent tip.
 */
import { asObject, parseJsonText } from '../../rails/http-json.js'
import type { Network } from '../../config/network.js'
import type { RailCheckReport } from '../../rails/rail.js'
import type { EsploraDeps } from './esplora-deps.js'

/** The hash of block 0 of each network: Esplora tells no network name, its genesis block does. */
export const GENESIS_HASHES: Record<Network, string[]> = {
  mainnet: ['000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f'],
  // testnet3 and testnet4.
  testnet: [
    '000000000933ea01ad0ee984209779baaec3ced90fa3f408719526f8d77f4943',
    '00000000da84f2bafbbc53dee25a72ae507ff4914b867c565be350b0da8bf043',
  ],
  signet: ['00000008819873e925422c1ff0f99f7cc9bbb232af63a077a480a3633bee1ef6'],
  regtest: ['0f9188f13cb7b2e71f2a335e3a4fc328bf5beb436012afef4cd4f1f3c7a4f9a2'],
}

/** How old Esplora's tip may be before the index counts as behind: blocks come every ten minutes or so. */
const TIP_AGE_MAX_S = 2 * 3600

/** The network whose block 0 has this hash, if any. */
export function networkOfGenesis(hash: string): string | undefined {
  return Object.entries(GENESIS_HASHES).find(([, hashes]) => hashes.includes(hash))?.[0]
}

export async function checkEsplora(deps: EsploraDeps): Promise<RailCheckReport> {
  const { request } = deps
  const network = deps.options.network
  const report: RailCheckReport = { rail: 'onchain', adapter: 'esplora', reachable: false, problems: [] }
  try {
    const genesis = (await request('/block-height/0'))?.trim()
    report.reachable = true
    const known = networkOfGenesis(genesis ?? '')
    if (known) report.network = known
    if (known !== network)
      report.problems.push(
        `esplora serves ${known ?? `an unknown chain (genesis ${genesis})`}, the service is configured for ${network}`,
      )
    const tipHash = (await request('/blocks/tip/hash'))?.trim() ?? ''
    const tip = asObject(
      parseJsonText((await request(`/block/${tipHash}`)) ?? '', 'esplora tip block'),
      'block',
    )
    const ageS = Math.floor(deps.now() / 1000) - Number(tip.timestamp)
    // Regtest makes blocks only when asked; an old tip there says nothing.
    report.synced = network === 'regtest' || ageS <= TIP_AGE_MAX_S
    if (!report.synced)
      report.problems.push(
        `esplora's tip (height ${String(tip.height)}) is ${Math.round(ageS / 60)} minutes old`,
      )
    // Esplora has no version endpoint, and no wallet: there is no version or balance to report.
  } catch (err) {
    report.problems.push(`esplora: ${(err as Error).message}`)
  }
  return report
}
