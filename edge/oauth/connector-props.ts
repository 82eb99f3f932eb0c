// The one shape the OAuth server (./server.ts), its token exchange (./tokens.ts), consent
// (./index.tsx) and refresh check (./refresh.ts) share; a leaf, so none of them imports another
// for it.
/** What an access token carries, encrypted in KV with the token as key: its connector's key. */
export interface ConnectorProps {
  accountId: string;
  keyId: string;
  key: string;
}
