// Single-threaded C++ peer of train/algos/ntuple_td.py (TD(0) defaults), for bench/game2048_train.py.
//
//   g++ -O3 -march=native -std=c++17 -o td2048 td2048.cpp
//   ./td2048 SECONDS SEED      -> one JSON line: moves, games, seconds, avg_score_last_1000
//
// The same method as the JAX learner: 4 standard 6-tuples read on the 8 board symmetries
// (32 features, one float table of 16^6 per pattern), greedy 1-ply play on
// reward + V(afterstate), afterstate TD(0) with alpha 0.1 split evenly over the 32 features,
// spawns of a 2 (p 0.9) or 4 (p 0.1) in a uniform empty cell. One game at a time, updated
// online after every move.
//
// Board: uint64, cell i (row-major 0..15) in bits 4i..4i+3 holds the tile exponent (0 empty),
// capped at 15 (two 32768s merge into 15 again; never reached in short runs). Row r is the
// 16-bit word r, its column 0 in the low nibble.

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

using u64 = std::uint64_t;
using u32 = std::uint32_t;
using u16 = std::uint16_t;

namespace {

// ---- row tables: slide a row toward its low nibble (left) / high nibble (right) ------------

u16 row_left[65536], row_right[65536];
u32 reward_left[65536], reward_right[65536];

void build_row_tables() {
    for (u32 code = 0; code < 65536; ++code) {
        int in[4], out[4] = {0, 0, 0, 0};
        for (int p = 0; p < 4; ++p) in[p] = (code >> (4 * p)) & 0xF;
        int n = 0, pending = 0;
        u32 reward = 0;
        for (int p = 0; p < 4; ++p) {
            if (!in[p]) continue;
            if (pending && pending == in[p]) {
                int merged = pending < 15 ? pending + 1 : 15;
                out[n++] = merged;
                reward += 1u << (pending + 1);
                pending = 0;
            } else {
                if (pending) out[n++] = pending;
                pending = in[p];
            }
        }
        if (pending) out[n++] = pending;
        u32 res = 0;
        for (int p = 0; p < 4; ++p) res |= u32(out[p]) << (4 * p);
        row_left[code] = u16(res);
        reward_left[code] = reward;
    }
    // right = reverse the row, slide left, reverse back
    auto rev = [](u32 r) -> u32 {
        return ((r & 0xF) << 12) | ((r & 0xF0) << 4) | ((r >> 4) & 0xF0) | ((r >> 12) & 0xF);
    };
    for (u32 code = 0; code < 65536; ++code) {
        row_right[code] = u16(rev(row_left[rev(code)]));
        reward_right[code] = reward_left[rev(code)];
    }
}

// ---- board symmetries ------------------------------------------------------------------------

// Mask of the nibbles of the listed cells.
constexpr u64 cell_mask(std::initializer_list<int> cells) {
    u64 m = 0;
    for (int c : cells) m |= u64(0xF) << (4 * c);
    return m;
}

// Transpose in two steps: swap the off-diagonal cells inside each 2x2 block ((r,c) <-> (c,r),
// a distance of 3 cells = 12 bits), then swap the two off-diagonal 2x2 blocks (6 cells = 24 bits).
inline u64 transpose(u64 b) {
    constexpr u64 keep1 = cell_mask({0, 2, 5, 7, 8, 10, 13, 15});
    constexpr u64 up1 = cell_mask({1, 3, 9, 11});     // (even r, odd c) -> +3 cells
    constexpr u64 down1 = cell_mask({4, 6, 12, 14});  // (odd r, even c) -> -3 cells
    b = (b & keep1) | ((b & up1) << 12) | ((b & down1) >> 12);
    constexpr u64 keep2 = cell_mask({0, 1, 4, 5, 10, 11, 14, 15});
    constexpr u64 up2 = cell_mask({2, 3, 6, 7});      // top-right block -> bottom-left: +6 cells
    constexpr u64 down2 = cell_mask({8, 9, 12, 13});
    return (b & keep2) | ((b & up2) << 24) | ((b & down2) >> 24);
}

// Mirror left-right: reverse the 4 nibbles of every row.
inline u64 flip_h(u64 b) {
    b = ((b & 0x0F0F0F0F0F0F0F0FULL) << 4) | ((b >> 4) & 0x0F0F0F0F0F0F0F0FULL);
    return ((b & 0x00FF00FF00FF00FFULL) << 8) | ((b >> 8) & 0x00FF00FF00FF00FFULL);
}

// Mirror top-bottom: reverse the 4 rows.
inline u64 flip_v(u64 b) {
    return (b << 48) | ((b & 0xFFFF0000ULL) << 16) | ((b >> 16) & 0xFFFF0000ULL) | (b >> 48);
}

// ---- moves (0 up, 1 right, 2 down, 3 left, as in jaxgames.game2048.board) --------------------

inline u64 slide_rows(u64 b, const u16* table, const u32* rewards, u32& reward) {
    u64 out = 0;
    reward = 0;
    for (int r = 0; r < 4; ++r) {
        u32 row = (b >> (16 * r)) & 0xFFFF;
        out |= u64(table[row]) << (16 * r);
        reward += rewards[row];
    }
    return out;
}

inline u64 move(u64 b, int action, u32& reward) {
    switch (action) {
        case 0: return transpose(slide_rows(transpose(b), row_left, reward_left, reward));
        case 1: return slide_rows(b, row_right, reward_right, reward);
        case 2: return transpose(slide_rows(transpose(b), row_right, reward_right, reward));
        default: return slide_rows(b, row_left, reward_left, reward);
    }
}

// ---- RNG: splitmix64 ------------------------------------------------------------------------

struct Rng {
    u64 s;
    inline u64 next() {
        u64 z = (s += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    }
};

// A 2 (exponent 1) w.p. 0.9 or a 4 w.p. 0.1 in a uniformly chosen empty cell.
inline u64 spawn(u64 b, Rng& rng) {
    int empty[16], n = 0;
    for (int i = 0; i < 16; ++i)
        if (!((b >> (4 * i)) & 0xF)) empty[n++] = i;
    if (!n) return b;
    u64 w = rng.next();
    int k = int(((w & 0xFFFFFFFFULL) * u64(n)) >> 32);
    u64 tile = (w >> 32) < 429496730ULL ? 2 : 1;  // 0.1 * 2^32
    return b | (tile << (4 * empty[k]));
}

// ---- n-tuple network --------------------------------------------------------------------------

constexpr int kPatterns = 4, kFeatures = 8 * kPatterns;
constexpr u64 kTable = 1u << 24;  // 16^6
constexpr float kAlpha = 0.1f;

std::vector<float> weights;  // [4][16^6]

// The 32 feature indices of a board: the four 6-tuples
//   0 1 2 3 4 5 / 4 5 6 7 8 9 / 0 1 2 4 5 6 / 4 5 6 8 9 10
// read as 24-bit nibble strings on each of the 8 symmetric boards.
inline void features(u64 b, u32* idx) {
    u64 t = transpose(b);
    const u64 sym[8] = {b, flip_h(b), flip_v(b), flip_h(flip_v(b)),
                        t, flip_h(t), flip_v(t), flip_h(flip_v(t))};
    for (int s = 0; s < 8; ++s) {
        u64 x = sym[s];
        idx[s] = u32(x & 0xFFFFFF);
        idx[8 + s] = u32(1 * kTable + ((x >> 16) & 0xFFFFFF));
        idx[16 + s] = u32(2 * kTable + ((x & 0xFFF) | ((x >> 4) & 0xFFF000)));
        idx[24 + s] = u32(3 * kTable + (((x >> 16) & 0xFFF) | ((x >> 20) & 0xFFF000)));
    }
}

inline float value_of(const u32* idx) {
    const float* w = weights.data();
    float v = 0.f;
    for (int f = 0; f < kFeatures; ++f) v += w[idx[f]];
    return v;
}

inline void td_update(const u32* idx, float target) {
    float step = (kAlpha / kFeatures) * (target - value_of(idx));
    float* w = weights.data();
    for (int f = 0; f < kFeatures; ++f) w[idx[f]] += step;
}

u64 initial_board(Rng& rng) { return spawn(spawn(0, rng), rng); }

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s SECONDS SEED\n", argv[0]);
        return 2;
    }
    const double seconds = std::atof(argv[1]);
    Rng rng{std::strtoull(argv[2], nullptr, 10)};
    build_row_tables();
    weights.assign(kPatterns * kTable, 0.f);

    using clock = std::chrono::steady_clock;
    const auto start = clock::now();
    const auto deadline = start + std::chrono::duration<double>(seconds);

    constexpr int kLast = 1000;
    std::vector<u64> last_scores(kLast, 0);
    u64 moves = 0, games = 0;

    u64 board = initial_board(rng);
    u64 score = 0;
    bool has_prev = false;
    u32 prev_idx[kFeatures];

    for (;;) {
        // greedy 1-ply: reward + V(afterstate) over the legal moves, first best on ties
        int best = -1;
        float best_q = 0.f, best_v = 0.f;
        u32 best_r = 0;
        u64 best_after = 0;
        u32 best_idx[kFeatures], idx[kFeatures];
        for (int a = 0; a < 4; ++a) {
            u32 r;
            u64 after = move(board, a, r);
            if (after == board) continue;
            features(after, idx);
            float v = value_of(idx);
            float q = float(r) + v;
            if (best < 0 || q > best_q) {
                best = a, best_q = q, best_v = v, best_r = r, best_after = after;
                for (int f = 0; f < kFeatures; ++f) best_idx[f] = idx[f];
            }
        }
        if (best < 0) {  // game over: the last afterstate's target is 0
            if (has_prev) td_update(prev_idx, 0.f);
            last_scores[games % kLast] = score;
            ++games;
            board = initial_board(rng);
            score = 0;
            has_prev = false;
            continue;
        }
        if (has_prev) td_update(prev_idx, float(best_r) + best_v);
        for (int f = 0; f < kFeatures; ++f) prev_idx[f] = best_idx[f];
        has_prev = true;
        score += best_r;
        board = spawn(best_after, rng);
        ++moves;
        if ((moves & 4095) == 0 && clock::now() >= deadline) break;
    }

    const double elapsed = std::chrono::duration<double>(clock::now() - start).count();
    const u64 n = games < kLast ? games : kLast;
    double sum = 0;
    for (u64 i = 0; i < n; ++i) sum += double(last_scores[i]);
    std::printf("{\"moves\": %llu, \"games\": %llu, \"seconds\": %.4f, \"avg_score_last_1000\": %.1f}\n",
                (unsigned long long)moves, (unsigned long long)games, elapsed, n ? sum / n : 0.0);
    return 0;
}
