// Single-threaded C++ peer of train/algos/ntuple_td.py (TD(0) defaults), for bench/game2048_train.py.
//
//   g++ -O3 -march=native -std=c++17 -o td2048 td2048.cpp
//   ./td2048 SECONDS SEED [GAMES]  -> one JSON line: moves, games, seconds, avg_score_last_1000
//                                     (stops after SECONDS, or GAMES finished games if given)
//   ./td2048 --check        -> reads probe commands on stdin (see run_checks), for the
//                              differential tests in tests/game2048/test_cpp_peer.py
//
// The same method as the JAX learner: 4 standard 6-tuples read on the 8 board symmetries
// (32 features, one float table of 16^6 per pattern), greedy 1-ply play on
// reward + V(afterstate), afterstate TD(0) with alpha 0.1 split evenly over the 32 features,
// spawns of a 2 (p 0.9) or 4 (p 0.1) in a uniform empty cell. One game at a time, updated
// online after every move; the previous afterstate's value is re-read after the last update,
// as the JAX learner reads it (its weights are still in cache, so this costs little).
//
// Where the time goes and what keeps it short (ideas learnt from TDL2048, code our own):
// - the 4 x 64 MiB float tables are read at ~128 random places per move (32 features x up to
//   4 afterstates): the program is bound by memory latency (perf: ~3/4 of the samples on those
//   loads). The 128 reads of a move are independent, so they are issued together (all indices
//   first, then prefetches, then the sums: ~15 % more moves per CPU-second than without the
//   prefetches), and the tables live on 2 MiB pages (madvise(MADV_HUGEPAGE): fewer TLB
//   misses, ~8 % more).
// - one 8-byte line-table entry per 16-bit line gives left, right and the (direction-free)
//   merge reward; all four afterstates come from 8 look-ups on the board and its transpose,
//   and each afterstate's transpose (needed by its symmetries) comes with it.
// - the 8 symmetric boards are the afterstate, its transpose and flips of both, each feature
//   index 1-2 shifts/masks.
// - a spawn is one random word: empty-cell mask by bit folding and popcount.
// No BMI2 (pext/pdep): microcoded and slow on AMD CPUs before Zen 3.
//
// Board: uint64, cell i (row-major 0..15) in bits 4i..4i+3 holds the tile exponent (0 empty),
// capped at 15 (two 32768s merge into 15 again; never reached in short runs). Row r is the
// 16-bit word r, its column 0 in the low nibble.

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <sys/mman.h>

using u64 = std::uint64_t;
using u32 = std::uint32_t;
using u16 = std::uint16_t;

namespace {

// ---- line table: slide a 16-bit line toward its low nibble (left) or high nibble (right) -------

struct LineMove {
    u16 left, right;  // the slid line
    u32 reward;       // merged tile values; the same in both directions (runs of equal tiles
                      // merge floor(len/2) pairs either way; checked when the table is built)
};
LineMove line_table[65536];

u32 reverse_line(u32 r) {
    return ((r & 0xF) << 12) | ((r & 0xF0) << 4) | ((r >> 4) & 0xF0) | ((r >> 12) & 0xF);
}

void slide_line_left(u32 code, u32& out_code, u32& reward) {
    int out[4] = {0, 0, 0, 0}, n = 0, pending = 0;
    reward = 0;
    for (int p = 0; p < 4; ++p) {
        int t = (code >> (4 * p)) & 0xF;
        if (!t) continue;
        if (pending && pending == t) {
            out[n++] = pending < 15 ? pending + 1 : 15;
            reward += 1u << (pending + 1);
            pending = 0;
        } else {
            if (pending) out[n++] = pending;
            pending = t;
        }
    }
    if (pending) out[n++] = pending;
    out_code = 0;
    for (int p = 0; p < 4; ++p) out_code |= u32(out[p]) << (4 * p);
}

void build_line_table() {
    for (u32 code = 0; code < 65536; ++code) {
        u32 left, right_rev, reward_left, reward_right;
        slide_line_left(code, left, reward_left);
        slide_line_left(reverse_line(code), right_rev, reward_right);
        if (reward_left != reward_right) {
            std::fprintf(stderr, "error: line %04x merges %u left but %u right\n", code, reward_left,
                         reward_right);
            std::exit(1);
        }
        line_table[code] = {u16(left), u16(reverse_line(right_rev)), reward_left};
    }
}

// ---- moves (0 up, 1 right, 2 down, 3 left, as in jaxgames.game2048.board) ---------------------

// Mask of the nibbles of the listed cells.
constexpr u64 cell_mask(std::initializer_list<int> cells) {
    u64 m = 0;
    for (int c : cells) m |= u64(0xF) << (4 * c);
    return m;
}

// Transpose in two steps: swap the off-diagonal cells inside each 2x2 block ((r,c) <-> (c,r),
// a distance of 3 cells = 12 bits), then swap the two off-diagonal 2x2 blocks (6 cells = 24 bits).
// Plain shifts and masks: pext/pdep would do it too, but are microcoded (slow) on older AMD CPUs.
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

// All four moves at once from 8 line look-ups: the rows of the board give right/left, the rows
// of its transpose (its columns, row 0 in the low nibble, so "up" is the left slide) give
// up/down, which stay transposed until the end (the features need both forms).
struct Afterstates {
    u64 board[4];
    u64 transposed[4];
    u32 reward[4];
};

inline void expand(u64 b, Afterstates& out) {
    const u64 t = transpose(b);
    u64 up_t = 0, right = 0, down_t = 0, left = 0;
    u32 row_reward = 0, col_reward = 0;
    for (int i = 0; i < 4; ++i) {
        const LineMove& r = line_table[(b >> (16 * i)) & 0xFFFF];
        left |= u64(r.left) << (16 * i);
        right |= u64(r.right) << (16 * i);
        row_reward += r.reward;
        const LineMove& c = line_table[(t >> (16 * i)) & 0xFFFF];
        up_t |= u64(c.left) << (16 * i);
        down_t |= u64(c.right) << (16 * i);
        col_reward += c.reward;
    }
    out.board[0] = transpose(up_t), out.board[1] = right;
    out.board[2] = transpose(down_t), out.board[3] = left;
    out.transposed[0] = up_t, out.transposed[1] = transpose(right);
    out.transposed[2] = down_t, out.transposed[3] = transpose(left);
    out.reward[0] = col_reward, out.reward[1] = row_reward;
    out.reward[2] = col_reward, out.reward[3] = row_reward;
}

// ---- board symmetries ----------------------------------------------------------------------

// Mirror left-right: reverse the 4 nibbles of every row.
inline u64 flip_h(u64 b) {
    b = ((b & 0x0F0F0F0F0F0F0F0FULL) << 4) | ((b >> 4) & 0x0F0F0F0F0F0F0F0FULL);
    return ((b & 0x00FF00FF00FF00FFULL) << 8) | ((b >> 8) & 0x00FF00FF00FF00FFULL);
}

// Mirror top-bottom: reverse the 4 rows.
inline u64 flip_v(u64 b) { return __builtin_bswap64(((b & 0x00FF00FF00FF00FFULL) << 8) |
                                                     ((b >> 8) & 0x00FF00FF00FF00FFULL)); }

// ---- RNG: splitmix64 ----------------------------------------------------------------------

struct Rng {
    u64 s;
    inline u64 next() {
        u64 z = (s += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    }
};

// One bit (the low one of its nibble) per empty cell.
inline u64 empty_cells(u64 b) {
    b |= b >> 2;
    b |= b >> 1;
    return ~b & 0x1111111111111111ULL;
}

// A 2 (exponent 1) w.p. 0.9 or a 4 w.p. 0.1 in a uniformly chosen empty cell; one random word
// (low half picks the k-th empty cell, high half the tile).
inline u64 spawn(u64 b, Rng& rng) {
    u64 empty = empty_cells(b);
    const u64 n = __builtin_popcountll(empty);
    if (!n) return b;
    const u64 w = rng.next();
    for (u64 k = ((w & 0xFFFFFFFFULL) * n) >> 32; k; --k) empty &= empty - 1;
    const u64 cell_bit = empty & -empty;
    const u64 tile = (w >> 32) < 429496730ULL ? 2 : 1;  // 0.1 * 2^32
    return b | (cell_bit * tile);
}

u64 initial_board(Rng& rng) { return spawn(spawn(0, rng), rng); }

// ---- n-tuple network --------------------------------------------------------------------------

constexpr int kPatterns = 4, kFeatures = 8 * kPatterns;
constexpr u64 kTable = 1u << 24;  // 16^6
constexpr float kAlpha = 0.1f;

float* weights = nullptr;  // [4][16^6]

// The flat weight indices of one board's 32 features: the four 6-tuples
//   0 1 2 3 4 5 / 4 5 6 7 8 9 / 0 1 2 4 5 6 / 4 5 6 8 9 10
// read as 24-bit nibble strings (first cell lowest) on each of the 8 symmetric boards.
// Each reading is one or two shifts and masks of the symmetric board; t = transpose(b).
inline void features(u64 b, u64 t, u32* idx) {
    const u64 sym[8] = {b, flip_h(b), flip_v(b), flip_h(flip_v(b)),
                        t, flip_h(t), flip_v(t), flip_h(flip_v(t))};
    for (int s = 0; s < 8; ++s) {
        const u64 x = sym[s];
        idx[4 * s + 0] = u32(x & 0xFFFFFF);
        idx[4 * s + 1] = u32(1 * kTable + ((x >> 16) & 0xFFFFFF));
        idx[4 * s + 2] = u32(2 * kTable + ((x & 0xFFF) | ((x >> 4) & 0xFFF000)));
        idx[4 * s + 3] = u32(3 * kTable + (((x >> 16) & 0xFFF) | ((x >> 20) & 0xFFF000)));
    }
}

// Four running sums, not one: a single chain of 32 dependent float adds kept the loads waiting
// (~10 % more moves per CPU-second measured; the JAX learner sums in its own order too).
inline float value_of(const u32* idx) {
    float part[4] = {0.f, 0.f, 0.f, 0.f};
    for (int f = 0; f < kFeatures; f += 4)
        for (int k = 0; k < 4; ++k) part[k] += weights[idx[f + k]];
    return (part[0] + part[1]) + (part[2] + part[3]);
}

// TD(0) step of one afterstate toward target; its value re-read from the current weights.
inline void td_update(const u32* idx, float target) {
    const float step = (kAlpha / kFeatures) * (target - value_of(idx));
    for (int f = 0; f < kFeatures; ++f) weights[idx[f]] += step;
}

void allocate_weights() {
    const size_t bytes = size_t(kPatterns) * kTable * sizeof(float);
    constexpr size_t kHugePage = size_t(2) << 20;
    void* p = std::aligned_alloc(kHugePage, bytes);
    if (!p) {
        std::fprintf(stderr, "error: cannot allocate %zu MiB of weights\n", bytes >> 20);
        std::exit(1);
    }
    // Ask for 2 MiB pages before the first touch (a hint: without them it is only slower).
    madvise(p, bytes, MADV_HUGEPAGE);
    std::memset(p, 0, bytes);
    weights = static_cast<float*>(p);
}

// Greedy 1-ply choice: the move with the largest reward + V(afterstate), first best on ties.
// Returns -1 when no move is legal. All features of all legal afterstates are indexed and
// prefetched before any is summed, so their cache misses overlap.
struct Choice {
    int action;
    u64 after;
    u32 reward;
    float value;
    u32 idx[kFeatures];
};

inline int choose(u64 board, Choice& best) {
    Afterstates as;
    expand(board, as);
    u32 idx[4][kFeatures];
    bool legal[4];
    for (int a = 0; a < 4; ++a) {
        legal[a] = as.board[a] != board;
        if (!legal[a]) continue;
        features(as.board[a], as.transposed[a], idx[a]);
        for (int f = 0; f < kFeatures; ++f) __builtin_prefetch(weights + idx[a][f]);
    }
    int chosen = -1;
    float best_q = 0.f, best_v = 0.f;
    for (int a = 0; a < 4; ++a) {
        if (!legal[a]) continue;
        const float v = value_of(idx[a]);
        const float q = float(as.reward[a]) + v;
        if (chosen < 0 || q > best_q) chosen = a, best_q = q, best_v = v;
    }
    if (chosen < 0) return -1;
    best.action = chosen;
    best.after = as.board[chosen];
    best.reward = as.reward[chosen];
    best.value = best_v;
    std::memcpy(best.idx, idx[chosen], sizeof best.idx);
    return chosen;
}

int train(double seconds, u64 seed, u64 max_games) {
    Rng rng{seed};
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
    Choice best;

    for (;;) {
        if (choose(board, best) < 0) {  // game over: the last afterstate's target is 0
            if (has_prev) td_update(prev_idx, 0.f);
            last_scores[games % kLast] = score;
            ++games;
            board = initial_board(rng);
            score = 0;
            has_prev = false;
            if (games == max_games) break;
            continue;
        }
        if (has_prev) td_update(prev_idx, float(best.reward) + best.value);
        std::memcpy(prev_idx, best.idx, sizeof prev_idx);
        has_prev = true;
        score += best.reward;
        board = spawn(best.after, rng);
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

// ---- probes for the differential tests -------------------------------------------------------
//
// One command per stdin line, boards as 16 hex digits (nibble i = cell i, i.e. cell 0 last);
// one answer line per command:
//   expand B        -> "A0 R0 A1 R1 A2 R2 A3 R3": afterstate and reward of up/right/down/left
//   features B      -> the 32 flat weight indices of B (pattern p's table starts at p * 16^6)
//   set I V         -> weight I := V; answers "ok"
//   step P B        -> one learning step with previous afterstate P (or "-" for none) and
//                      current board B: "ACTION REWARD VALUE AFTER" of the greedy choice
//                      (ACTION -1 when B has no move), after P's TD(0) update
//   weight I        -> the current value of weight I
//   spawn B N SEED  -> N spawns on B from one generator: "C0 ... C15 FOURS", how often each
//                      cell got the tile, and how many tiles were 4s

u64 parse_board(const char* s) {
    char* end = nullptr;
    const u64 b = std::strtoull(s, &end, 16);
    if (!*s || *end) {
        std::fprintf(stderr, "error: bad board '%s' (want 16 hex digits, cell 0 last)\n", s);
        std::exit(2);
    }
    return b;
}

u32 parse_index(const char* s) {
    char* end = nullptr;
    const unsigned long long i = std::strtoull(s, &end, 10);
    if (!*s || *end || i >= kPatterns * kTable) {
        std::fprintf(stderr, "error: bad weight index '%s' (0..%llu)\n", s,
                     (unsigned long long)(kPatterns * kTable - 1));
        std::exit(2);
    }
    return u32(i);
}

int run_checks() {
    allocate_weights();
    char line[512], cmd[32], a[64], b[64], c[64];
    while (std::fgets(line, sizeof line, stdin)) {
        const int n = std::sscanf(line, "%31s %63s %63s %63s", cmd, a, b, c);
        if (n <= 0) continue;
        const std::string op = cmd;
        if (op == "expand" && n == 2) {
            Afterstates as;
            expand(parse_board(a), as);
            for (int k = 0; k < 4; ++k)
                std::printf("%016llx %u%c", (unsigned long long)as.board[k], as.reward[k], k < 3 ? ' ' : '\n');
        } else if (op == "features" && n == 2) {
            u32 idx[kFeatures];
            features(parse_board(a), transpose(parse_board(a)), idx);
            for (int f = 0; f < kFeatures; ++f) std::printf("%u%c", idx[f], f + 1 < kFeatures ? ' ' : '\n');
        } else if (op == "set" && n == 3) {
            weights[parse_index(a)] = std::strtof(b, nullptr);
            std::printf("ok\n");
        } else if (op == "weight" && n == 2) {
            std::printf("%.9g\n", weights[parse_index(a)]);
        } else if (op == "step" && n == 3) {
            const bool has_prev = std::string(a) != "-";
            u32 prev_idx[kFeatures];
            if (has_prev) features(parse_board(a), transpose(parse_board(a)), prev_idx);
            Choice best;
            if (choose(parse_board(b), best) < 0) {
                if (has_prev) td_update(prev_idx, 0.f);
                std::printf("-1 0 0 0000000000000000\n");
            } else {
                if (has_prev) td_update(prev_idx, float(best.reward) + best.value);
                std::printf("%d %u %.9g %016llx\n", best.action, best.reward, best.value,
                            (unsigned long long)best.after);
            }
        } else if (op == "spawn" && n == 4) {
            const u64 board = parse_board(a);
            const long count = std::atol(b);
            Rng rng{std::strtoull(c, nullptr, 10)};
            long cells[16] = {}, fours = 0;
            for (long k = 0; k < count; ++k) {
                const u64 diff = spawn(board, rng) ^ board;
                const int cell = __builtin_ctzll(diff) / 4;
                ++cells[cell];
                fours += ((diff >> (4 * cell)) & 0xF) == 2;
            }
            for (int k = 0; k < 16; ++k) std::printf("%ld ", cells[k]);
            std::printf("%ld\n", fours);
        } else {
            std::fprintf(stderr, "error: bad probe command: %s", line);
            return 2;
        }
        std::fflush(stdout);
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    build_line_table();
    if (argc == 2 && std::string(argv[1]) == "--check") return run_checks();
    if (argc != 3 && argc != 4) {
        std::fprintf(stderr, "usage: %s SECONDS SEED [GAMES]   (or: %s --check < probes)\n", argv[0], argv[0]);
        return 2;
    }
    char* end = nullptr;
    const double seconds = std::strtod(argv[1], &end);
    if (!*argv[1] || *end || !(seconds > 0)) {
        std::fprintf(stderr, "error: SECONDS must be a positive number, got '%s'\n", argv[1]);
        return 2;
    }
    const u64 seed = std::strtoull(argv[2], &end, 10);
    if (!*argv[2] || *end) {
        std::fprintf(stderr, "error: SEED must be a non-negative integer, got '%s'\n", argv[2]);
        return 2;
    }
    u64 max_games = 0;  // 0: no limit
    if (argc == 4) {
        max_games = std::strtoull(argv[3], &end, 10);
        if (!*argv[3] || *end || !max_games) {
            std::fprintf(stderr, "error: GAMES must be a positive integer, got '%s'\n", argv[3]);
            return 2;
        }
    }
    allocate_weights();
    return train(seconds, seed, max_games);
}
