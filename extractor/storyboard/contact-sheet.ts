// A job's storyboard: a contact sheet (the frames in a grid, each with its time written on
// it) and, from the same grid without the times, the sprite its WebVTT track points into.
//
// Sizes: tiles TILE_WIDTH px wide, height by the video's aspect ratio (even), at most
// MAX_COLUMNS columns, no gutters, so both images share one geometry (the job's storyboard
// columns/rows/tile_width/tile_height). At most MAX_TILES tiles, chosen evenly among the
// frames of larger jobs, so the images stay within JPEG's 65,535-pixel side.
import sharp from "sharp";
import type { TileGeometry } from "./thumbnail-track.ts";
import { thumbnailTrack, tilePosition, vttTime } from "./thumbnail-track.ts";

export const TILE_WIDTH = 320;
export const MAX_COLUMNS = 5;
export const MAX_TILES = 300;
const LABEL_HEIGHT = 22;

export interface Tile {
  /** The moment the picture shows, seconds from the video's first frame. */
  moment: number;
  /** The picture, TILE_WIDTH wide (any format sharp reads). */
  image: Buffer;
}

export interface Storyboard {
  sheet: Buffer;
  sprite: Buffer;
  vtt: string;
  columns: number;
  rows: number;
  tileWidth: number;
  tileHeight: number;
}

/** A tile from a delivered RGB picture: TILE_WIDTH wide, JPEG (small while the job runs). */
export function makeTile(pixels: Buffer, width: number, height: number): Promise<Buffer> {
  return sharp(pixels, { raw: { width, height, channels: 3 } })
    .resize({ width: TILE_WIDTH, height: tileHeightFor(width, height), fit: "fill" })
    .jpeg({ quality: 88 })
    .toBuffer();
}

/**
 * The frames that get a tile: all of them up to MAX_TILES, else MAX_TILES spread evenly, so a
 * 10,000-frame job resizes and holds only the tiles its storyboard will show.
 */
export function framesWithTiles(indexesInTimeOrder: number[]): Set<number> {
  const n = indexesInTimeOrder.length;
  if (n <= MAX_TILES) return new Set(indexesInTimeOrder);
  return new Set(
    Array.from(
      { length: MAX_TILES },
      (_, i) => indexesInTimeOrder[Math.floor((i * n) / MAX_TILES)],
    ),
  );
}

export function tileHeightFor(width: number, height: number): number {
  return Math.max(2, 2 * Math.round((TILE_WIDTH * height) / width / 2));
}

export async function buildStoryboard(
  allTiles: Tile[],
  picture: { width: number; height: number },
  durationSeconds: number,
): Promise<Storyboard | null> {
  const sorted = [...allTiles].sort((a, b) => a.moment - b.moment);
  const tiles =
    sorted.length > MAX_TILES
      ? Array.from(
          { length: MAX_TILES },
          (_, i) => sorted[Math.floor((i * sorted.length) / MAX_TILES)],
        )
      : sorted;
  if (tiles.length === 0) return null;
  const grid: TileGeometry = {
    columns: Math.min(MAX_COLUMNS, tiles.length),
    tileWidth: TILE_WIDTH,
    tileHeight: tileHeightFor(picture.width, picture.height),
  };
  const rows = Math.ceil(tiles.length / grid.columns);
  const canvas = {
    width: grid.columns * grid.tileWidth,
    height: rows * grid.tileHeight,
    channels: 3 as const,
    background: { r: 0, g: 0, b: 0 },
  };
  const placed = tiles.map((tile, i) => ({ input: tile.image, ...offsets(i, grid) }));
  const labels = tiles.map((tile, i) => {
    const { left, top } = offsets(i, grid);
    const height = Math.min(LABEL_HEIGHT, grid.tileHeight);
    return {
      input: timeLabel(tile.moment, grid.tileWidth, height),
      left,
      top: top + grid.tileHeight - height,
    };
  });
  const [sheet, sprite] = await Promise.all([
    sharp({ create: canvas })
      .composite([...placed, ...labels])
      .jpeg({ quality: 85 })
      .toBuffer(),
    sharp({ create: canvas }).composite(placed).jpeg({ quality: 80 }).toBuffer(),
  ]);
  return {
    sheet,
    sprite,
    vtt: thumbnailTrack(
      tiles.map((t) => t.moment),
      durationSeconds,
      grid,
    ),
    columns: grid.columns,
    rows,
    tileWidth: grid.tileWidth,
    tileHeight: grid.tileHeight,
  };
}

function offsets(i: number, grid: TileGeometry): { left: number; top: number } {
  const { x, y } = tilePosition(i, grid);
  return { left: x, top: y };
}

/** The time, white on a translucent band across the tile's foot (DejaVu Sans, on Debian). */
function timeLabel(moment: number, width: number, height: number): Buffer {
  const text = vttTime(moment);
  return Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">` +
      `<rect width="${width}" height="${height}" fill="#000" fill-opacity="0.6"/>` +
      `<text x="6" y="16" font-family="DejaVu Sans" font-size="14" fill="#fff">${text}</text>` +
      "</svg>",
  );
}
