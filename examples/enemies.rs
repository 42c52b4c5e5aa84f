//! Composition instead of inheritance: a hero, a companion and three enemies, none of them a
//! type of its own.
//!
//! Each kind of character is a *bundle*, a tuple of small components, built by a function:
//!
//! | kind        | Name | Position | Velocity | Health | Attack | Inventory | AIBehavior | tags    |
//! |-------------|------|----------|----------|--------|--------|-----------|------------|---------|
//! | player      | ✓    | ✓        | ✓        | 30     | 4      | sword     | -          | Player  |
//! | easy enemy  | ✓    | ✓        | ✓        | 5      | 1      | -         | Chase      | Hostile |
//! | tough enemy | ✓    | ✓        | ✓        | 12     | 3      | gold, key | Guard      | Hostile |
//! | companion   | ✓    | ✓        | ✓        | 15     | -      | potion    | Follow     | -       |
//!
//! The flying-and-swimming enemy is an easy enemy plus two tag components (`Flying`,
//! `Swimming`): inserting them moves it to another archetype, and every system keeps working
//! on it, because systems ask for components, not for types.
//!
//! Four systems run each turn: `steer_player` (a `Single`: skipped once the hero has fallen),
//! `ai` (which reports what every AI-driven character does), `movement`, and `combat` (which
//! despawns at 0 hp and hands the loser's inventory to the hero through `Commands`). After the
//! last turn, `report_survivors` runs once, outside the schedule (`world.run_system_once`).
//!
//! ```text
//! cargo run --release --example enemies
//! ```

use ecs::prelude::*;

/// A display name.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Name(pub &'static str);

/// A tile on the map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    /// Column, growing east.
    pub x: i32,
    /// Row, growing north.
    pub y: i32,
}

/// Tiles moved per turn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Velocity {
    /// Columns per turn.
    pub dx: i32,
    /// Rows per turn.
    pub dy: i32,
}

/// Hit points; the character is despawned when they reach 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Health(pub i32);

/// Damage dealt per turn to each adjacent foe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attack(pub i32);

/// Item ids carried (see [`item_name`]). A `Vec` is a fine component: the chunk stores the
/// three-word handle, the items live on the heap, and despawning drops them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Inventory(pub Vec<u32>);

/// What the `ai` system makes a character do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AIBehavior {
    /// Walk towards the player; flee when at 2 hp or less.
    Chase,
    /// Stay put.
    Guard,
    /// Keep to the tile west of the player.
    Follow,
}

/// Tag: the character the player controls.
pub struct Player;
/// Tag: fights the player.
pub struct Hostile;
/// Tag: can fly.
pub struct Flying;
/// Tag: can swim.
pub struct Swimming;

/// Item ids.
pub const SWORD: u32 = 1;
/// Item ids.
pub const POTION: u32 = 2;
/// Item ids.
pub const GOLD: u32 = 3;
/// Item ids.
pub const KEY: u32 = 4;

/// The name of an item id.
pub fn item_name(id: u32) -> &'static str {
    match id {
        SWORD => "sword",
        POTION => "potion",
        GOLD => "gold",
        KEY => "key",
        _ => "something",
    }
}

fn items(inventory: &Inventory) -> String {
    if inventory.0.is_empty() {
        return "nothing".to_owned();
    }
    let names: Vec<&str> = inventory.0.iter().map(|&i| item_name(i)).collect();
    names.join(", ")
}

/// The lines each turn adds to the report.
#[derive(Default)]
struct Log(Vec<String>);

// ----- bundles: the "classes" ----------------------------------------------------------------

/// The hero.
pub fn player(x: i32, y: i32) -> (Name, Player, Position, Velocity, Health, Attack, Inventory) {
    let pos = Position { x, y };
    (
        Name("hero"),
        Player,
        pos,
        Velocity::default(),
        Health(30),
        Attack(4),
        Inventory(vec![SWORD]),
    )
}

/// A weak enemy that chases the player.
pub fn easy_enemy(
    name: &'static str,
    x: i32,
    y: i32,
) -> (
    Name,
    Hostile,
    Position,
    Velocity,
    Health,
    Attack,
    AIBehavior,
) {
    let pos = Position { x, y };
    (
        Name(name),
        Hostile,
        pos,
        Velocity::default(),
        Health(5),
        Attack(1),
        AIBehavior::Chase,
    )
}

/// A strong enemy that guards its post and carries loot.
pub fn tough_enemy(
    name: &'static str,
    x: i32,
    y: i32,
) -> (
    Name,
    Hostile,
    Position,
    Velocity,
    Health,
    Attack,
    Inventory,
    AIBehavior,
) {
    let pos = Position { x, y };
    let loot = Inventory(vec![GOLD, KEY]);
    (
        Name(name),
        Hostile,
        pos,
        Velocity::default(),
        Health(12),
        Attack(3),
        loot,
        AIBehavior::Guard,
    )
}

/// A friend that follows the player; no `Attack`, so it never fights.
pub fn companion(
    name: &'static str,
    x: i32,
    y: i32,
) -> (Name, Position, Velocity, Health, Inventory, AIBehavior) {
    let pos = Position { x, y };
    let bag = Inventory(vec![POTION]);
    (
        Name(name),
        pos,
        Velocity::default(),
        Health(15),
        bag,
        AIBehavior::Follow,
    )
}

// ----- systems -------------------------------------------------------------------------------

/// Chebyshev distance: how many king moves apart two tiles are.
fn distance(a: Position, b: Position) -> i32 {
    (a.x - b.x).abs().max((a.y - b.y).abs())
}

/// One step from `from` towards `to`.
fn towards(from: Position, to: Position) -> Velocity {
    Velocity {
        dx: (to.x - from.x).signum(),
        dy: (to.y - from.y).signum(),
    }
}

/// The hero walks east until a hostile is next to it, then stands and fights. `Single`: there
/// is one hero, and once it has fallen the system is skipped.
fn steer_player(
    hero: Single<(RefRO<Position>, RefRW<Velocity>), With<Player>>,
    foes: Query<(RefRO<Position>, With<Hostile>)>,
    mut log: ResMut<Log>,
) {
    let foes: Vec<Position> = foes.iter().map(|(p, ())| *p).collect();
    let (p, v) = hero.into_inner();
    if foes.iter().any(|&f| distance(*p, f) <= 1) {
        *v = Velocity::default();
        log.0.push("  hero stands and fights".to_owned());
    } else {
        *v = Velocity { dx: 1, dy: 0 };
        log.0.push("  hero walks east".to_owned());
    }
}

/// What the closing report reads of each survivor.
#[derive(Query)]
struct Survivor {
    entity: Entity,
    name: RefRO<Name>,
    position: RefRO<Position>,
    health: RefRO<Health>,
    bag: Option<RefRO<Inventory>>,
}

/// The closing report, run once after the last turn (a one-shot system): each survivor's
/// line, in spawn order.
fn report_survivors(survivors: Query<Survivor>, mut log: ResMut<Log>) {
    let mut lines: Vec<(Entity, String)> = survivors
        .iter()
        .map(|s| {
            let carries = s.bag.map_or_else(|| "nothing".to_owned(), items);
            let (name, hp, p) = (s.name.0, s.health.0, s.position);
            let line = format!("  {name}: {hp} hp at ({}, {}), carries {carries}", p.x, p.y);
            (s.entity, line)
        })
        .collect();
    lines.sort_by_key(|(e, _)| *e);
    log.0.push("survivors:".to_owned());
    log.0.extend(lines.into_iter().map(|(_, line)| line));
}

/// What `ai` reads and writes for each character.
#[derive(Query)]
struct Actor {
    name: RefRO<Name>,
    behavior: RefRO<AIBehavior>,
    position: RefRO<Position>,
    health: RefRO<Health>,
    velocity: RefRW<Velocity>,
    flying: Option<RefRO<Flying>>,
    swimming: Option<RefRO<Swimming>>,
}

/// Every character with an `AIBehavior` picks a velocity and says what it does.
fn ai(
    mut actors: Query<Actor>,
    hero: Query<(RefRO<Position>, With<Player>)>,
    mut log: ResMut<Log>,
) {
    let Some(target) = hero.iter().map(|(p, ())| *p).next() else {
        return;
    };
    actors.for_each(|actor| {
        let ActorItem {
            name,
            behavior,
            position: p,
            health: hp,
            velocity: v,
            flying,
            swimming,
        } = actor;
        let mut how = String::new();
        match (flying.is_some(), swimming.is_some()) {
            (true, true) => how.push_str(", flying and swimming"),
            (true, false) => how.push_str(", flying"),
            (false, true) => how.push_str(", swimming"),
            (false, false) => {}
        }
        let (velocity, what) = match behavior {
            AIBehavior::Chase if hp.0 <= 2 => {
                let away = towards(target, *p);
                (away, format!("flees from the hero{how}"))
            }
            AIBehavior::Chase if distance(*p, target) <= 1 => {
                (Velocity::default(), "attacks the hero".to_owned())
            }
            AIBehavior::Chase => (towards(*p, target), format!("chases the hero{how}")),
            AIBehavior::Guard => (Velocity::default(), "guards its post".to_owned()),
            AIBehavior::Follow => {
                let spot = Position {
                    x: target.x - 1,
                    y: target.y,
                };
                (towards(*p, spot), "follows the hero".to_owned())
            }
        };
        *v = velocity;
        log.0.push(format!("  {} {what}", name.0));
    });
}

fn movement(mut q: Query<(RefRW<Position>, RefRO<Velocity>)>) {
    q.for_each(|(p, v)| {
        p.x += v.dx;
        p.y += v.dy;
    });
}

/// The hero and every adjacent hostile hit each other; the fallen are despawned and the
/// hero takes their inventory.
///
/// Both queries write `Health`, which one system may only do when no entity can match both:
/// `With<Hostile>` in one and `Without<Hostile>` in the other prove that.
#[derive(Query)]
struct Foe {
    entity: Entity,
    name: RefRO<Name>,
    position: RefRO<Position>,
    health: RefRW<Health>,
    attack: RefRO<Attack>,
    loot: Option<RefRO<Inventory>>,
    _hostile: With<Hostile>,
}

#[derive(Query)]
struct Hero {
    entity: Entity,
    position: RefRO<Position>,
    health: RefRW<Health>,
    attack: RefRO<Attack>,
    _friendly: Without<Hostile>,
    _player: With<Player>,
}

fn combat(
    mut foes: Query<Foe>,
    mut heroes: Query<Hero>,
    mut log: ResMut<Log>,
    mut commands: Commands,
) {
    let Some((hero, hero_pos, hero_attack)) = heroes
        .iter_mut()
        .map(|h| (h.entity, *h.position, h.attack.0))
        .next()
    else {
        return;
    };
    let mut damage_taken = 0;
    foes.for_each(|foe| {
        let FoeItem {
            entity: foe,
            name,
            position: p,
            health: hp,
            attack,
            loot,
            ..
        } = foe;
        if distance(*p, hero_pos) > 1 {
            return;
        }
        hp.0 -= hero_attack;
        damage_taken += attack.0;
        log.0
            .push(format!("  hero hits {} for {hero_attack}", name.0));
        log.0
            .push(format!("  {} hits hero for {}", name.0, attack.0));
        if hp.0 <= 0 {
            commands.despawn(foe);
            match loot {
                Some(loot) if !loot.0.is_empty() => {
                    log.0
                        .push(format!("  {} falls and drops {}", name.0, items(loot)));
                    let loot = loot.0.clone();
                    commands.add(move |world: &mut World| {
                        if let Ok(bag) = world.get_mut::<Inventory>(hero) {
                            bag.0.extend(loot);
                        }
                    });
                }
                _ => log.0.push(format!("  {} falls", name.0)),
            }
        }
    });
    if damage_taken > 0 {
        let hp = heroes.get(hero).expect("the hero was just found").health;
        hp.0 -= damage_taken;
        log.0.push(format!("  hero has {} hp left", hp.0));
        if hp.0 <= 0 {
            log.0.push("  hero falls".to_owned());
            commands.despawn(hero);
        }
    }
}

/// Builds the cast and the schedule.
pub fn setup() -> (World, Schedule) {
    let mut world = World::new();
    world.insert_resource(Log::default());
    world.spawn(player(0, 0));
    world.spawn(companion("dog", -1, 0));
    world.spawn(easy_enemy("goblin", 4, 0));
    world.spawn(tough_enemy("ogre", 9, 0));
    // No `FlyingSwimmingEnemy` type: an easy enemy plus two components.
    let eel_bat = world.spawn(easy_enemy("eel-bat", 3, 3));
    world
        .insert(eel_bat, (Flying, Swimming))
        .expect("just spawned");

    let mut schedule = Schedule::new();
    add_systems(&mut schedule);
    (world, schedule)
}

/// Adds the four systems, in the order conflicts between them resolve to.
pub fn add_systems(schedule: &mut Schedule) {
    schedule.add_system(steer_player);
    schedule.add_system(ai);
    schedule.add_system(movement);
    schedule.add_system(combat);
}

/// Plays `turns` turns and returns the report: what happened each turn, then the survivors.
pub fn run(turns: usize) -> Vec<String> {
    let (mut world, mut schedule) = setup();
    let mut out = Vec::new();
    for turn in 1..=turns {
        out.push(format!("turn {turn}"));
        schedule
            .run(&mut world)
            .expect("no explicit orders, so no cycle");
        out.append(&mut world.resource_mut::<Log>().0);
    }
    world
        .run_system_once(report_survivors)
        .expect("a report that reads and logs");
    out.append(&mut world.resource_mut::<Log>().0);
    out
}

fn main() {
    for line in run(12) {
        println!("{line}");
    }
}
