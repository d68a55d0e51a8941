export interface SecretSample {
  kind: string;
  secret: string;
  text: string;
}
export interface LookAlike {
  kind: string;
  text: string;
}
export function secretSamples(seed?: number): SecretSample[];
export function lookAlikes(seed?: number): LookAlike[];
