*** Settings ***
Documentation     ConfluentKafkaLibrary's keywords doing an operator's checks: create a topic, produce,
...               read a partition from its start, consume as a group and commit, pause and resume,
...               read the watermarks and configs, delete the topic. Run by robot_kafka.py.
Library           ConfluentKafkaLibrary
Library           Collections
Suite Setup       Create Topic With Admin
Suite Teardown    Delete Topic With Admin

*** Variables ***
${SERVER}         127.0.0.1
${PORT}           9092
${TOPIC}          corpus-robot
${GROUP}          corpus-robot-group
${COUNT}          30

*** Test Cases ***
Topic Has Three Partitions
    ${topics}=    List Topics    ${ADMIN}
    Dictionary Should Contain Key    ${topics}    ${TOPIC}
    ${partitions}=    Get Topic Partitions    ${topics}[${TOPIC}]
    ${ids}=    Get Dictionary Keys    ${partitions}
    Should Be Equal As Strings    ${ids}    [0, 1, 2]

Produce To Each Partition
    ${producer}=    Create Producer    server=${SERVER}    port=${PORT}    broker.address.family=v4
    FOR    ${i}    IN RANGE    ${COUNT}
        ${partition}=    Evaluate    ${i} % 3
        Produce    ${producer}    ${TOPIC}    value=order-${i}    key=shop-${partition}    partition=${partition}
    END
    ${left}=    Flush    ${producer}    timeout=10
    Should Be Equal As Integers    ${left}    0

Read One Partition From Its Start
    ${consumer}=    Create Consumer    server=${SERVER}    port=${PORT}    auto_offset_reset=earliest
    ...    broker.address.family=v4
    ${tp}=    Create Topic Partition    ${TOPIC}    ${1}    ${0}
    Assign To Topic Partition    ${consumer}    ${tp}
    ${values}=    Poll    ${consumer}    max_records=${10}    decode_format=utf_8
    ${expected}=    Evaluate    [f"order-{i}" for i in range(1, ${COUNT}, 3)]
    Lists Should Be Equal    ${values}    ${expected}
    ${marks}=    Get Watermark Offsets    ${consumer}    ${tp}
    Should Be Equal As Strings    ${marks}    (0, 10)
    Close Consumer    ${consumer}

Consume As A Group And Commit
    ${consumer}=    Create Consumer    group_id=${GROUP}    server=${SERVER}    port=${PORT}
    ...    auto_offset_reset=earliest    enable_auto_commit=${False}    broker.address.family=v4
    Subscribe Topic    ${consumer}    topics=${TOPIC}
    ${messages}=    Poll    ${consumer}    max_records=${COUNT}    only_value=${False}    poll_attempts=${30}
    ${rows}=    Evaluate    sorted((m.partition(), m.offset(), m.key().decode(), m.value().decode()) for m in $messages)
    ${expected}=    Evaluate    sorted((i % 3, i // 3, f"shop-{i % 3}", f"order-{i}") for i in range(${COUNT}))
    Lists Should Be Equal    ${rows}    ${expected}
    ${consumers}=    Get All Consumers
    ${committed}=    Evaluate    $consumers[$consumer].commit(asynchronous=False)
    ${offsets}=    Evaluate    sorted((tp.partition, tp.offset) for tp in $committed)
    Should Be Equal As Strings    ${offsets}    [(0, 10), (1, 10), (2, 10)]
    ${tps}=    Evaluate    [confluent_kafka.TopicPartition("${TOPIC}", p) for p in range(3)]    modules=confluent_kafka
    ${positions}=    Get Position    ${consumer}    ${tps}
    ${at}=    Evaluate    [tp.offset for tp in $positions]
    Should Be Equal As Strings    ${at}    [10, 10, 10]
    Close Consumer    ${consumer}

Pause And Resume A Partition
    ${consumer}=    Create Consumer    server=${SERVER}    port=${PORT}    auto_offset_reset=earliest
    ...    broker.address.family=v4
    ${tps}=    Evaluate    [confluent_kafka.TopicPartition("${TOPIC}", p, 0) for p in (0, 2)]    modules=confluent_kafka
    Assign To Topic Partition    ${consumer}    ${tps}
    Pause    ${consumer}    ${tps}[1]
    ${first}=    Poll    ${consumer}    max_records=${10}    decode_format=utf_8
    ${none}=    Poll    ${consumer}    max_records=${1}    poll_attempts=${2}
    Should Be Empty    ${none}
    Resume    ${consumer}    ${tps}[1]
    ${then}=    Poll    ${consumer}    max_records=${10}    decode_format=utf_8
    ${expected}=    Evaluate    [f"order-{i}" for i in range(0, ${COUNT}, 3)]
    Lists Should Be Equal    ${first}    ${expected}
    ${expected}=    Evaluate    [f"order-{i}" for i in range(2, ${COUNT}, 3)]
    Lists Should Be Equal    ${then}    ${expected}
    Close Consumer    ${consumer}

Group Is Listed And Described
    ${groups}=    List Groups    ${ADMIN}
    ${ids}=    Evaluate    [g.group_id for g in $groups.valid]
    List Should Contain Value    ${ids}    ${GROUP}
    ${described}=    Describe Groups    ${ADMIN}    group_ids=${{[$GROUP]}}
    ${state}=    Evaluate    str($described[$GROUP].state)
    Should Be Equal    ${state}    ConsumerGroupState.EMPTY

Topic Config Is Described
    ${resource}=    Config Resource    ${{confluent_kafka.admin.ResourceType.TOPIC}}    ${TOPIC}
    ${configs}=    Describe Configs    ${ADMIN}    ${{[$resource]}}
    ${values}=    Evaluate    {name: entry.value for name, entry in $configs[$TOPIC].items()}
    Should Be Equal    ${values}[cleanup.policy]    delete
    Should Be Equal    ${values}[retention.ms]    3600000

*** Keywords ***
Create Topic With Admin
    ${admin}=    Create Admin Client    server=${SERVER}    port=${PORT}    broker.address.family=v4
    Set Suite Variable    ${ADMIN}    ${admin}
    ${new}=    New Topic    ${TOPIC}    num_partitions=${3}    replication_factor=${1}
    ...    config=${{{"retention.ms": "3600000"}}}
    ${created}=    Create Topics    ${ADMIN}    new_topics=${new}
    Should Be Equal    ${created}[${TOPIC}]    ${None}
    Wait Until Keyword Succeeds    10x    0.5s    Topic Is Listed

Topic Is Listed
    ${topics}=    List Topics    ${ADMIN}
    Dictionary Should Contain Key    ${topics}    ${TOPIC}

Delete Topic With Admin
    ${deleted}=    Delete Topics    ${ADMIN}    ${TOPIC}
    Should Be Equal    ${deleted}[${TOPIC}]    ${None}
