export type Network = 'mainnet' | 'testnet' | 'signet' | 'regtest'

export const NETWORKS: readonly Network[] = ['mainnet', 'testnet', 'signet', 'regtest']
